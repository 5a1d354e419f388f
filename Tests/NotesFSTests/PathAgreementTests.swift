/// The mount, the CLI (`notesfs query`) and search results give every record the same path, in the
/// cases where naming is hard: duplicate titles (one of them with no creation date), notes whose
/// folder is gone, folders on a parent cycle, a real folder named `Recovered` beside the virtual
/// one, records at the root of every shown type, and names that need escaping or cutting.

import FUSE
import Foundation
import Glibc
import Index
import Notes
import RecordStore
import TestSupport
import Testing

@Suite struct PathAgreementTests {
    /// Removes `creationDate` from the record named `recordName` in the closed database at `path`
    /// (a record written by hand, or by an old client, may lack one).
    static func removeCreationDate(_ path: String, recordName: String) throws {
        try handEditRecord(path, recordName: recordName, replacing: #""creationDate":[-+0-9.eE]+,?"#, with: "")
    }

    /// Every awkward case, in one closed database; returns the record whose creation date was removed.
    static func seed(_ path: String) throws -> RecordID {
        let store = try RecordDatabase(path: path, create: true)
        defer { try? store.close() }
        let work = Folder(name: "Work")
        let realRecovered = Folder(name: FolderTree.recoveredName)
        let x = Folder(name: "X")
        let y = Folder(name: "Y", parent: x.recordID)
        let gone = Folder(name: "Gone")
        try store.modify(saving: [work.record, realRecovered.record, x.record, y.record, gone.record])
        // Duplicate titles, created one after another; the last loses its creation date below.
        var undated: RecordID?
        for _ in 0..<3 {
            let note = Note(title: "Plan", text: "zebra plan", folder: work.recordID)
            try store.modify(saving: [note.record])
            undated = note.recordID
        }
        // Names that are escaped, cut, or stand in for an empty title.
        let long = String(repeating: "é", count: 200)
        let asset = try store.makeAsset(Data("zebra".utf8))
        try store.modify(saving: [
            Note(title: "a/b", text: "zebra slash", folder: work.recordID).record,
            Note(title: "", text: "zebra empty", folder: work.recordID).record,
            Note(title: "Untitled", text: "zebra untitled", folder: work.recordID).record,
            Note(title: long, text: "zebra long one", folder: work.recordID).record,
            Note(title: long + "x", text: "zebra long two", folder: work.recordID).record,
            Note(title: "nul\u{0}name", text: "zebra nul", folder: work.recordID).record,
            Attachment(name: "..", content: asset, folder: work.recordID).record,
            Attachment(name: "zebra.txt", content: asset, folder: work.recordID).record,
            Attachment(name: "zebra.txt", content: asset, folder: work.recordID).record,
        ])
        // At the root: a note, an attachment and a note that wants the name of a folder there.
        try store.modify(saving: [
            Note(title: "Top", text: "zebra top").record,
            Attachment(name: "zebra.png", content: asset).record,
            Note(title: "Recovered", text: "zebra root recovered").record,
            Note(title: "in-x", text: "zebra in x", folder: x.recordID).record,
            Note(title: "in-real", text: "zebra in real recovered", folder: realRecovered.recordID).record,
        ])
        // A note whose folder is gone (a reference without cascade), and a parent cycle X ↔ Y.
        var stranded = Note(title: "Plan", text: "zebra stranded").record
        stranded["folder"] = .reference(Reference(recordID: gone.recordID, action: .none))
        try store.modify(saving: [stranded])
        var cyclic = try store.record(for: x.recordID)
        cyclic["parent"] = .reference(Reference(recordID: y.recordID, action: .deleteSelf))
        try store.modify(saving: [cyclic], deleting: [gone.recordID])
        return try #require(undated)
    }

    /// Every record's path as the mount shows it, by record name (a walk of the mount).
    static func mountPaths(_ root: String) -> [String: String] {
        var paths: [String: String] = [:]
        var pending = [""]
        while let directory = pending.popLast() {
            for name in rawListing(root + "/" + directory) ?? [] {
                let relative = directory.isEmpty ? name : directory + "/" + name
                let (status, _) = statOf(root + "/" + relative)
                if let status, status.st_mode & S_IFMT == S_IFDIR { pending.append(relative) }
                if let recordName = recordName(root + "/" + relative) { paths[recordName] = relative }
            }
        }
        return paths
    }

    /// Every record's path as `notesfs query --json` prints it, by record name.
    static func cliPaths(_ binary: String, _ database: String) throws -> [String: String] {
        var paths: [String: String] = [:]
        for type in [Folder.recordType, Note.recordType, Attachment.recordType] {
            let result = try run([binary, "--db", database, "query", "TRUEPREDICATE", "--type", type, "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let records = try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [[String: Any]] ?? []
            for record in records {
                guard let name = record["recordName"] as? String, var path = record["path"] as? String else { continue }
                if path.hasSuffix("/") { path.removeLast() }
                paths[name] = path
            }
        }
        return paths
    }

    @Test(.tags(.mount), .needsFUSE, .timeLimit(.minutes(2))) func theMountTheCLIAndSearchGiveTheSamePaths() throws {
        let binary = notesfsBinary
        try withDatabaseDirectory { path in
            let undated = try Self.seed(path)
            try Self.removeCreationDate(path, recordName: undated.recordName)
            do {
                let reopened = try openDatabase(path)
                defer { try? reopened.close() }
                #expect(reopened.metadata(for: undated)?.creationDate == nil)
            }
            let cli = try Self.cliPaths(binary, path)
            let search: [String: String]
            do {
                let database = try openDatabase(path)
                defer { try? database.close() }
                let results = try NotesSearchIndex(database: database).search(try SearchQuery("zebra"), limit: nil, snippets: false)
                search = Dictionary(results.hits.map { ($0.name, $0.path) }, uniquingKeysWith: { first, _ in first })
            }
            try withNotesMount(databasePath: path) { m in
                let mount = Self.mountPaths(m.root)
                // Every record is shown, and by the same path everywhere.
                let records = m.database.metadata { [Folder.recordType, Note.recordType, Attachment.recordType].contains($0.recordType) }
                #expect(records.count == 22)
                #expect(search.count == 17)  // every note, and the attachments named zebra
                for metadata in records {
                    let name = metadata.recordID.recordName
                    #expect(mount[name] != nil, "the mount does not show \(metadata.recordType) \(name)")
                    #expect(
                        cli[name] == mount[name], "\(metadata.recordType) \(name): CLI \(cli[name] ?? "-"), mount \(mount[name] ?? "-")")
                    if let found = search[name] {
                        #expect(found == mount[name], "\(name): search \(found), mount \(mount[name] ?? "-")")
                    }
                }
                // The awkward names, spelt out once.
                #expect(mount[undated.recordName] == "Work/Plan.md")
                #expect(
                    Set(mount.values).isSuperset(of: [
                        "Recovered", "Recovered/in-real.md", "Recovered.md", "Top.md", "zebra.png", "Work/a∕b.md", "Work/Untitled.md",
                        "Work/nul␀name.md", "Work/\u{2025}", "Work/zebra.txt",
                    ]))
                #expect(mount.values.contains { $0.hasPrefix("Recovered (notesf") && $0.hasSuffix("/X/in-x.md") })
                #expect(mount.values.contains { $0.hasPrefix("Recovered (notesf") && $0.hasSuffix("/Plan.md") })
            }
        }
    }
}

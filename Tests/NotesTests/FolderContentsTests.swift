import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

/// FolderContents' lookups of one entry by record ID (the entry, or only its file name): what the
/// folder's listing holds.
@Suite struct FolderContentsTests {
    /// Every entry of every folder is found by its record ID in its own folder, with the listing's
    /// file name and path (conflict suffixes and the virtual `Recovered` folder included), and in
    /// no other folder; a folder that does not exist finds nothing.
    @Test func entryByRecordIDIsTheListingsEntry() async throws {
        let notes = try makeManager()
        let database = notes.database
        let work = try await notes.newFolder(name: "Work")
        let sub = try await notes.newFolder(name: "Sub", parent: work)
        for text in ["one", "two", "three"] { _ = try await notes.save(note: Note(title: "a/b", text: text, folder: work.recordID)) }
        _ = try await notes.save(note: Note(title: "Sub", folder: work.recordID))
        _ = try await notes.save(note: Note(title: "", folder: sub.recordID))
        _ = try await notes.save(note: Note(title: "Top"))
        // A note whose folder is gone shows under Recovered.
        let gone = try await notes.newFolder(name: "Gone")
        var stranded = Note(title: "stranded").record
        stranded["folder"] = .reference(Reference(recordID: gone.recordID, action: .none))
        try database.modify(saving: [stranded])
        try database.modify(deleting: [gone.recordID])

        let contents = FolderContents(database: database)
        let namesOnly = FolderContents(database: database)  // no listing kept: its own file names
        #expect(namesOnly.folderPaths(keepingListings: false) == contents.folderPaths())
        let folders: [RecordID?] = [nil, work.recordID, sub.recordID, FolderContents.recoveredID]
        var checked = 0
        for folder in folders {
            let listing = contents.children(of: folder)
            for expected in listing {
                #expect(namesOnly.fileName(of: expected.recordID, in: folder) == expected.fileName)
                #expect(contents.fileName(of: expected.recordID, in: folder) == expected.fileName)
                let found = contents.entry(expected.recordID, in: folder)
                #expect(found?.fileName == expected.fileName)
                #expect(found?.path == expected.path)
                #expect(found?.parent == expected.parent)
                #expect(found?.kind == expected.kind)
                for other in folders where other != folder {
                    #expect(contents.entry(expected.recordID, in: other) == nil)
                    #expect(namesOnly.fileName(of: expected.recordID, in: other) == nil)
                }
                checked += 1
            }
        }
        #expect(checked == 10)  // Work, Top.md, Recovered; Sub, three a∕b and Sub.md; Untitled.md; stranded.md
        #expect(contents.entry(FolderContents.recoveredID, in: nil)?.fileName == "Recovered")
        let clashing = contents.children(of: work.recordID).filter { $0.name == "a/b" }.map(\.fileName)
        #expect(Set(clashing).count == 3 && clashing.contains("a∕b.md"))  // two with a suffix
        #expect(contents.entry(work.recordID, in: gone.recordID) == nil)
        #expect(namesOnly.fileName(of: work.recordID, in: gone.recordID) == nil)
        #expect(contents.path(of: stranded.recordID) == "Recovered/stranded.md")
        #expect(try contents.folderPath(sub.recordID) == "Work/Sub")
    }
}

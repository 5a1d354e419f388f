import Foundation
import TestSupport
import Testing

@testable import RecordStore

@Suite struct FsckCommandTests {
    @Test func cleanDatabaseExitsZero() throws {
        let db = makeDatabasePath("fsck-clean")
        try notesfs(["folder", "new", "F"], db: db)
        try notesfs(["note", "new", "F/n", "--text", "x"], db: db)
        let result = try notesfs(["fsck"], db: db)
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "notesfs: 2 record files checked, 0 problems found\n")
    }

    @Test func findsEachPlantedFaultAndNothingElse() throws {
        let path = makeDatabasePath("fsck")
        let long = String(repeating: "long text ", count: 40)
        do {
            let db = try RecordDatabase(path: path, backgroundThread: false)
            var folder = Record(recordType: "Folder", recordID: RecordID(recordName: "folder-1"))
            folder["name"] = "Work"
            var notes: [Record] = []
            for name in ["truncated", "notjson", "fine"] {
                var note = Record(recordType: "Note", recordID: RecordID(recordName: name))
                note["title"] = .string(name)
                note["text"] = .string(long)
                note["folder"] = .reference(Reference(recordID: folder.recordID, action: .deleteSelf))
                notes.append(note)
            }
            var target = Record(recordType: "Note", recordID: RecordID(recordName: "target"))
            target["title"] = "target"
            var link = Record(recordType: "Note", recordID: RecordID(recordName: "link"))
            link["title"] = "Link"
            link["see"] = .reference(Reference(recordID: target.recordID, action: .none))
            try db.modify(saving: [folder] + notes + [target, link])
            // A dangling reference: the target goes, the .none reference stays.
            try db.modify(deleting: [target.recordID])
            // An unused asset younger than the grace period (a save may be about to use it): not reported.
            let orphan = try db.makeAsset(Data("nobody uses me".utf8))
            try db.checkpoint()
            try db.close()
            let truncated = path + "/" + RecordFileName.relativePath(for: "truncated")
            let data = try Data(contentsOf: URL(fileURLWithPath: truncated))
            try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: truncated))
            try Data("this is not json".utf8).write(to: URL(fileURLWithPath: path + "/" + RecordFileName.relativePath(for: "notjson")))
            #expect(db.assetPath(orphan).hasPrefix(path + "/assets/"))
        }

        let result = try notesfs(["fsck"], db: path)
        #expect(result.status == 4)
        #expect(result.lines.count == 3)
        let out = result.out
        #expect(out.contains(RecordFileName.relativePath(for: "truncated") + ": damaged record file"))
        #expect(out.contains(RecordFileName.relativePath(for: "notjson") + ": damaged record file"))
        #expect(out.contains("Link.md: record link field see references missing record target"))
        #expect(!out.contains("orphaned asset"))
        #expect(result.stderr.hasSuffix("notesfs: \(path): 3 problems found; run 'notesfs fsck --repair'\n"))

        let json = try parseJSON(try notesfs(["fsck", "--json"], db: path).stdout) as? [String: Any]
        let kinds = (json?["problems"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }.sorted()
        #expect(kinds == ["damagedRecordFile", "damagedRecordFile", "danglingReference"])

        let repaired = try notesfs(["fsck", "--repair"], db: path)
        #expect(repaired.lines.filter { $0.hasPrefix("moved aside: ") }.count == 2)
        #expect(repaired.lines.filter { $0.hasPrefix("dropped from the index: ") }.count == 2)
        // The dangling reference remains (repair deletes no record), and so does the young asset.
        #expect(repaired.status == 4)
        #expect(repaired.stderr.contains("1 remaining after repair"))
        #expect(repaired.out.contains("not repaired: record link field see: record target is gone"))
        #expect(try notesfs(["note", "cat", "Work/fine"], db: path).out == long)
        #expect(try notesfs(["ls", "Work"], db: path).out == "fine.md\n")
    }

    /// `rm journal.jsonl` on a database that never checkpointed: the notes are still there, and
    /// neither fsck nor fsck --repair takes their record files for foreign ones.
    @Test func aDeletedJournalLosesNoNote() throws {
        let db = makeDatabasePath("fsck-nojournal")
        #expect(try notesfs(["note", "new", "a", "--text", "hello"], db: db).status == 0)
        #expect(try notesfs(["note", "new", "b", "--text", "world"], db: db).status == 0)
        try FileManager.default.removeItem(atPath: db + "/journal.jsonl")
        #expect(try notesfs(["ls"], db: db).out == "a.md\nb.md\n")
        let fsck = try notesfs(["fsck"], db: db)
        #expect(fsck.status == 0, "\(fsck.out)\(fsck.stderr)")
        #expect(!fsck.out.contains("foreign"))
        let repaired = try notesfs(["fsck", "--repair"], db: db)
        #expect(repaired.status == 0, "\(repaired.out)\(repaired.stderr)")
        #expect(!repaired.out.contains("moved aside"))
        #expect(!FileManager.default.fileExists(atPath: db + "/lost+found/records"))
        #expect(try notesfs(["note", "cat", "a"], db: db).out == "hello")
        #expect(try notesfs(["note", "cat", "b"], db: db).out == "world")
    }
}

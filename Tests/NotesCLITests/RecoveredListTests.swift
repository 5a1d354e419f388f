/// `notesfs ls`, `note cat` and `export` show folders on a parent
/// cycle, and notes whose folder is gone, under `Recovered`, as the mount does.

import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@Suite struct RecoveredListTests {
    /// A cycle X ↔ Y (X holds `in-x.md`), and `stranded.md` whose folder (a reference without
    /// cascade) was deleted; `Work` is undamaged.
    private func seed(_ db: String) throws {
        let store = try RecordDatabase(path: db, backgroundThread: false)
        defer { try? store.close() }
        let work = Folder(name: "Work")
        let x = Folder(name: "X")
        let y = Folder(name: "Y", parent: x.recordID)
        let gone = Folder(name: "Gone")
        var stranded = Note(title: "stranded", text: "no folder").record
        stranded["folder"] = .reference(Reference(recordID: gone.recordID, action: .none))
        try store.modify(saving: [
            work.record, x.record, y.record, gone.record, Note(title: "in-x", text: "inside x", folder: x.recordID).record,
        ])
        try store.modify(saving: [stranded])
        var cyclic = try store.record(for: x.recordID)
        cyclic["parent"] = .reference(Reference(recordID: y.recordID, action: .deleteSelf))
        try store.modify(saving: [cyclic], deleting: [gone.recordID])
    }

    @Test func lsShowsRecovered() throws {
        let db = makeDatabasePath("recovered")
        try seed(db)
        let root = try notesfs(["ls"], db: db)
        #expect(root.status == 0, "\(root.stderr)")
        #expect(root.out == "Recovered/\nWork/\n")
        #expect(try notesfs(["ls", "Recovered"], db: db).out == "X/\nY/\nstranded.md\n")
        #expect(try notesfs(["ls", "Recovered/X"], db: db).out == "in-x.md\n")
        let cat = try notesfs(["note", "cat", "Recovered/X/in-x"], db: db)
        #expect(cat.status == 0, "\(cat.stderr)")
        #expect(cat.out == "inside x")
        #expect(try notesfs(["note", "cat", "Recovered/stranded.md"], db: db).out == "no folder")
        // Recovered itself is no record: nothing is created in it or removes it.
        let create = try notesfs(["note", "new", "Recovered/new", "--text", "x"], db: db)
        #expect(create.status == 2 && create.stderr.contains("read-only"), "\(create.stderr)")
        let remove = try notesfs(["folder", "rm", "Recovered"], db: db)
        #expect(remove.status == 2 && remove.stderr.contains("read-only"), "\(remove.stderr)")
        let long = try notesfs(["ls", "-l", "Recovered"], db: db)
        #expect(long.status == 0)
        #expect(long.lines.count == 3)
    }

    @Test func exportIncludesRecovered() throws {
        let db = makeDatabasePath("recoveredexport")
        try seed(db)
        let out = makeTemporaryDirectory("recoveredout")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try notesfs(["export", out + "/tree"], db: db)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try String(contentsOfFile: out + "/tree/Recovered/X/in-x.md", encoding: .utf8) == "inside x")
        #expect(try String(contentsOfFile: out + "/tree/Recovered/stranded.md", encoding: .utf8) == "no folder")
        #expect(FileManager.default.fileExists(atPath: out + "/tree/Work"))
    }
}

/// Folders whose parent chain is a cycle or dangles, and notes whose
/// folder is gone, stay reachable under the virtual read-only `Recovered` directory.

import FUSE
import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

/// What the damaged database holds.
struct DamagedTree {
    var x: RecordID
    var y: RecordID
    var z: RecordID
    var plain: RecordID
}

/// Seeds structural damage through the store's own API (each save is valid on its own):
/// - `Plain` at the root (undamaged), with `plain.md`;
/// - `X` ↔ `Y` a parent cycle, `X` holding `in-x.md` and a subfolder `Z` holding `in-z.md`;
/// - `Orphan`, whose parent (referenced with action none) was deleted, holding `in-orphan.md`;
/// - `stranded.md`, whose folder (referenced with action none) was deleted.
@discardableResult
func seedDamagedTree(_ database: RecordDatabase) throws -> DamagedTree {
    let plain = try saveFolder(database, name: "Plain")
    try saveNote(database, title: "plain", text: "plain text", folder: plain.recordID)
    let x = try saveFolder(database, name: "X")
    var y = try saveFolder(database, name: "Y", parent: x.recordID)
    try saveNote(database, title: "in-x", text: "inside x", folder: x.recordID)
    let z = try saveFolder(database, name: "Z", parent: x.recordID)
    try saveNote(database, title: "in-z", text: "inside z", folder: z.recordID)
    // Close the cycle: X's parent is Y.
    var xRecord = try database.record(for: x.recordID)
    xRecord["parent"] = .reference(Reference(recordID: y.recordID, action: .deleteSelf))
    try database.modify(saving: [xRecord])
    y = try Folder(record: database.record(for: y.recordID))
    // A dangling parent and a stranded note: references without cascade, then the target deleted.
    let gone = try saveFolder(database, name: "Gone")
    var orphan = Folder(name: "Orphan").record
    orphan["parent"] = .reference(Reference(recordID: gone.recordID, action: .none))
    try database.modify(saving: [orphan])
    try saveNote(database, title: "in-orphan", text: "inside orphan", folder: orphan.recordID)
    var stranded = Note(title: "stranded", text: "no folder").record
    stranded["folder"] = .reference(Reference(recordID: gone.recordID, action: .none))
    try database.modify(saving: [stranded])
    try database.modify(deleting: [gone.recordID])
    return DamagedTree(x: x.recordID, y: y.recordID, z: z.recordID, plain: plain.recordID)
}

@Suite(.tags(.mount), .needsFUSE) struct RecoveredTests {
    @Test func damagedFoldersShowUnderRecovered() throws {
        try withNotesMount(seed: { try seedDamagedTree($0) }) { m in
            #expect(listing(m.root) == ["Plain", "Recovered"])
            #expect(listing(m.path("Recovered")) == ["Orphan", "X", "Y", "stranded.md"])
            #expect(listing(m.path("Recovered/X")) == ["Z", "in-x.md"])
            #expect(listing(m.path("Recovered/Y")) == [])
            #expect(readFile(m.path("Recovered/X/in-x.md")) == "inside x")
            #expect(readFile(m.path("Recovered/X/Z/in-z.md")) == "inside z")
            #expect(readFile(m.path("Recovered/Orphan/in-orphan.md")) == "inside orphan")
            #expect(readFile(m.path("Recovered/stranded.md")) == "no folder")
            #expect(readFile(m.path("Plain/plain.md")) == "plain text")
            let (st, _) = statOf(m.path("Recovered"))
            #expect(st.map { $0.st_ino } == (1 << 48) - 1)
            #expect(st.map { $0.st_mode & 0o7777 } == 0o555)
            #expect(st.map { $0.st_mode & S_IFMT } == S_IFDIR)
            // find walks everything once and ends.
            let find = try run(["/usr/bin/find", m.root, "-name", "*.md"], timeout: 20)
            #expect(find.status == 0, "\(find)")
            #expect(find.out.split(separator: "\n").count == 5, "\(find.out)")
        }
    }

    @Test func recoveredIsReadOnly() throws {
        try withNotesMount(seed: { try seedDamagedTree($0) }) { m in
            #expect(errnoOf { mkdir(m.path("Recovered/new"), 0o755) } == EROFS)
            #expect(writeFile(m.path("Recovered/new.md"), "x") == EROFS)
            #expect(errnoOf { rmdir(m.path("Recovered")) } == EROFS)
            #expect(renameErrno(m.path("Recovered"), m.path("Elsewhere")) == EROFS)
            #expect(renameErrno(m.path("Plain/plain.md"), m.path("Recovered/plain.md")) == EROFS)
            #expect(listing(m.root) == ["Plain", "Recovered"])
        }
    }

    /// Another process closes a cycle while mounted: the mount moves both folders under Recovered
    /// (and the kernel forgets the old names) within a second or so.
    @Test func aCycleMadeElsewhereShowsUp() throws {
        var ids: (x: RecordID, y: RecordID)?
        try withNotesMount(seed: { db in
            let x = try saveFolder(db, name: "X")
            let y = try saveFolder(db, name: "Y", parent: x.recordID)
            try saveNote(db, title: "in-y", text: "inside y", folder: y.recordID)
            ids = (x.recordID, y.recordID)
        }) { m in
            let (x, y) = try #require(ids)
            #expect(listing(m.root) == ["X"])
            #expect(readFile(m.path("X/Y/in-y.md")) == "inside y")
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            var record = try other.record(for: x)
            record["parent"] = .reference(Reference(recordID: y, action: .deleteSelf))
            try other.modify(saving: [record])
            #expect(eventually(10) { listing(m.root) == ["Recovered"] }, "\(listing(m.root) ?? [])")
            #expect(listing(m.path("Recovered")) == ["X", "Y"])
            #expect(readFile(m.path("Recovered/Y/in-y.md")) == "inside y")
            // The kernel forgets the old name when the mount's notification thread has told it,
            // which may come just after the listing changed.
            #expect(eventually(10) { statOf(m.path("X")).1 == ENOENT })
        }
    }

    /// Another process strands a note (deletes its folder, whose reference does not cascade),
    /// then places it again: `Recovered` appears at the root with the note in it, and goes when
    /// nothing is stranded any more, whether the note moves to another folder or a folder of the
    /// missing record's name comes back (as a sync does when a folder's record arrives a page
    /// after its notes).
    @Test func recoveredComesAndGoesWithStrandedNotes() throws {
        var ids: (plain: RecordID, gone: RecordID, note: RecordID)?
        try withNotesMount(seed: { db in
            let plain = try saveFolder(db, name: "Plain")
            let gone = try saveFolder(db, name: "Gone")
            var note = Note(title: "s", text: "stranded text").record
            note["folder"] = .reference(Reference(recordID: gone.recordID, action: .none))
            try db.modify(saving: [note])
            ids = (plain.recordID, gone.recordID, note.recordID)
        }) { m in
            let (plain, gone, noteID) = try #require(ids)
            #expect(listing(m.root) == ["Gone", "Plain"])
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            try other.modify(deleting: [gone])
            #expect(eventually(10) { listing(m.root) == ["Plain", "Recovered"] }, "\(listing(m.root) ?? [])")
            #expect(listing(m.path("Recovered")) == ["s.md"])
            #expect(readFile(m.path("Recovered/s.md")) == "stranded text")
            // The folder's record comes back under its old name: the note is in it again.
            try other.modify(saving: [Folder(name: "Back", recordID: gone).record])
            #expect(eventually(10) { listing(m.root) == ["Back", "Plain"] }, "\(listing(m.root) ?? [])")
            #expect(listing(m.path("Back")) == ["s.md"])
            #expect(eventually(10) { statOf(m.path("Recovered")).1 == ENOENT })
            // Stranded again, then moved into another folder.
            try other.modify(deleting: [gone])
            #expect(eventually(10) { listing(m.root) == ["Plain", "Recovered"] }, "\(listing(m.root) ?? [])")
            var record = try other.record(for: noteID)
            record["folder"] = .reference(Reference(recordID: plain, action: .deleteSelf))
            try other.modify(saving: [record])
            #expect(eventually(10) { listing(m.root) == ["Plain"] }, "\(listing(m.root) ?? [])")
            #expect(listing(m.path("Plain")) == ["s.md"])
            #expect(readFile(m.path("Plain/s.md")) == "stranded text")
            #expect(eventually(10) { statOf(m.path("Recovered")).1 == ENOENT })
        }
    }

    /// Moving a folder out of Recovered repairs the record: the cycle is broken, and Y (whose
    /// parent X is now reachable) shows inside X.
    @Test func movingOutOfRecoveredRepairs() throws {
        try withNotesMount(seed: { try seedDamagedTree($0) }) { m in
            #expect(listing(m.path("Recovered")) == ["Orphan", "X", "Y", "stranded.md"])
            #expect(renameErrno(m.path("Recovered/X"), m.path("Plain/X")) == 0)
            #expect(listing(m.path("Plain/X")) == ["Y", "Z", "in-x.md"])
            #expect(listing(m.path("Recovered")) == ["Orphan", "stranded.md"])
            #expect(readFile(m.path("Plain/X/Z/in-z.md")) == "inside z")
            #expect(renameErrno(m.path("Recovered/Orphan"), m.path("Orphan")) == 0)
            #expect(renameErrno(m.path("Recovered/stranded.md"), m.path("stranded.md")) == 0)
            #expect(readFile(m.path("stranded.md")) == "no folder")
            #expect(readFile(m.path("Orphan/in-orphan.md")) == "inside orphan")
        }
    }

    /// A folder saved where it is (renamed elsewhere, or its times touched by a note's save here)
    /// leaves the hierarchy as it was: `Recovered` keeps what it held, under the new name.
    @Test func aFolderSavedInPlaceKeepsRecoveredAsItWas() throws {
        var damaged: DamagedTree?
        try withNotesMount(seed: { damaged = try seedDamagedTree($0) }) { m in
            let tree = try #require(damaged)
            #expect(listing(m.path("Recovered")) == ["Orphan", "X", "Y", "stranded.md"])
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            var x = try Folder(record: other.record(for: tree.x))
            x.name = "X2"
            try other.modify(saving: [x.record])
            #expect(
                eventually(10) { listing(m.path("Recovered")) == ["Orphan", "X2", "Y", "stranded.md"] },
                "\(listing(m.path("Recovered")) ?? [])")
            #expect(listing(m.path("Recovered/X2")) == ["Z", "in-x.md"])
            #expect(readFile(m.path("Recovered/X2/in-x.md")) == "inside x")
            // A note written here touches its folder's times: a save of the folder in place.
            #expect(writeFile(m.path("Plain/new.md"), "new") == 0)
            #expect(listing(m.path("Plain")) == ["new.md", "plain.md"])
            #expect(listing(m.root) == ["Plain", "Recovered"])
            #expect(listing(m.path("Recovered")) == ["Orphan", "X2", "Y", "stranded.md"])
            #expect(readFile(m.path("Recovered/stranded.md")) == "no folder")
        }
    }
}

/// A delete through the mount acts on what the name stands for *now*: another process may have
/// moved the note away, filled the folder or edited the note since the mount last caught up.
/// The mounts here have no store watcher, so the mount's listings stay as they were until a
/// commit or a refresh catches up: the stale moment is there every time, not by chance.

import FUSE
import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

@testable import NotesFS

@Suite(.tags(.mount), .needsFUSE) struct StaleNameDeleteTests {
    /// `rm -r RA` after another process moved `RA/In/N` out: rm's own calls (its readdir of `In`
    /// listed `N.md` before the move, then unlink, rmdir, rmdir). Real `rm -r` opens each directory
    /// again, which makes the mount catch up, so the move is made between its readdir and its unlink.
    @Test func rmOfAFolderKeepsTheNoteMovedOutOfItElsewhere() throws {
        var noteID: RecordID?
        var safeID: RecordID?
        try withNotesMount(
            storeWatcher: false,
            seed: { db in
                let ra = try saveFolder(db, name: "RA")
                let inner = try saveFolder(db, name: "In", parent: ra.recordID)
                safeID = try saveFolder(db, name: "Safe").recordID
                noteID = try saveNote(db, title: "N", text: "x", folder: inner.recordID).recordID
            }
        ) { m in
            #expect(listing(m.path("RA")) == ["In"])
            #expect(listing(m.path("RA/In")) == ["N.md"])
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            var moved = try other.record(for: try #require(noteID))
            moved["folder"] = .reference(Reference(recordID: try #require(safeID), action: .deleteSelf))
            try other.modify(saving: [moved])
            #expect(errnoOf { unlink(m.path("RA/In/N.md")) } == ENOENT)
            #expect(errnoOf { rmdir(m.path("RA/In")) } == 0)
            #expect(errnoOf { rmdir(m.path("RA")) } == 0)
            let note = try other.record(for: try #require(noteID))
            #expect(note["folder"]?.referenceValue?.recordID == safeID)
            #expect(note["text"]?.stringValue == "x")
            #expect(readFile(m.path("Safe/N.md")) == "x")
        }
    }

    @Test func rmdirOfAFolderFilledElsewhereIsNotEmpty() throws {
        var noteID: RecordID?
        var innerID: RecordID?
        try withNotesMount(
            storeWatcher: false,
            seed: { db in
                innerID = try saveFolder(db, name: "In").recordID
                noteID = try saveNote(db, title: "N", text: "kept").recordID
            }
        ) { m in
            #expect(listing(m.path("In")) == [])
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            var moved = try other.record(for: try #require(noteID))
            moved["folder"] = .reference(Reference(recordID: try #require(innerID), action: .deleteSelf))
            try other.modify(saving: [moved])
            #expect(errnoOf { rmdir(m.path("In")) } == ENOTEMPTY)
            #expect(try other.record(for: try #require(noteID))["text"]?.stringValue == "kept")
            #expect(listing(m.path("In")) == ["N.md"])
        }
    }

    @Test func unlinkOfANoteEditedElsewhereDeletesItAsItIsNow() throws {
        var noteID: RecordID?
        try withNotesMount(
            storeWatcher: false,
            seed: { db in
                noteID = try saveNote(db, title: "E", text: "old").recordID
            }
        ) { m in
            #expect(readFile(m.path("E.md")) == "old")
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            var edited = try other.record(for: try #require(noteID))
            edited["text"] = .string("new")
            try other.modify(saving: [edited])
            #expect(errnoOf { unlink(m.path("E.md")) } == 0)
            #expect(throws: RecordStoreError.unknownItem(try #require(noteID))) { try other.record(for: try #require(noteID)) }
        }
    }

    @Test func unlinkOfANoteMovedElsewhereIsNoEntry() throws {
        try withNoteChangedElsewhere("moved") { m, other, noteID in
            #expect(errnoOf { unlink(m.path("M.md")) } == ENOENT)
            let kept = try other.record(for: noteID)["text"]?.stringValue
            #expect(kept == "mine")
        }
    }

    /// A thread of the mount (the search indexer, the store's own) can catch the store up with
    /// another process's move while an unlink runs, after the listings took their pending changes
    /// and before the unlink reads the record: the record the name shows then has the new change
    /// tag, so the tag alone lets the delete through. The catch-up is made here by hand and its
    /// change held back from the listings, as in that window.
    @Test(arguments: ["moved", "renamed"]) func aStoreCaughtUpAheadOfTheListingsDeletesNothing(change: String) throws {
        try withNoteChangedElsewhere(change) { m, other, noteID in
            try m.database.refresh()
            m.fileSystem.pendingChanges.withLock { $0 = [] }
            let context = RequestContext(uid: getuid(), gid: getgid())
            #expect(throws: Errno.noEntry) {
                try m.fileSystem.unlink(context, parent: NotesFileSystem.rootInode, name: FileName("M.md"))
            }
            let kept = try other.record(for: noteID)["text"]?.stringValue
            #expect(kept == "mine")
        }
    }

    /// A mount without a store watcher that has shown `M.md` (text "mine"), whose note another
    /// process then `moved` into folder `Safe` or `renamed` to `N`; `body` gets the mount, that
    /// other process's database and the note's ID.
    private func withNoteChangedElsewhere(
        _ change: String, _ body: (NotesMount, RecordDatabase, RecordID) throws -> Void
    ) throws {
        var noteID: RecordID?
        var safeID: RecordID?
        try withNotesMount(
            storeWatcher: false,
            seed: { db in
                safeID = try saveFolder(db, name: "Safe").recordID
                noteID = try saveNote(db, title: "M", text: "mine").recordID
            }
        ) { m in
            #expect(readFile(m.path("M.md")) == "mine")
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            let id = try #require(noteID)
            var changed = try other.record(for: id)
            if change == "moved" {
                changed["folder"] = .reference(Reference(recordID: try #require(safeID), action: .deleteSelf))
            } else {
                changed["title"] = .string("N")
            }
            try other.modify(saving: [changed])
            try body(m, other, id)
        }
    }
}

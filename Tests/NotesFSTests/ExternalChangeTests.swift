/// Changes made elsewhere (another database handle, going through the journal like another process)
/// show in the mount within a second or two.

import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct ExternalChangeTests {
    @Test func cascadeDeleteOfAFolderDisappearsFromTheMount() throws {
        var top: RecordID?
        try withNotesMount(seed: { db in
            let folder = try saveFolder(db, name: "Doomed")
            let inner = try saveFolder(db, name: "Inner", parent: folder.recordID)
            try saveNote(db, title: "n", text: "inside", folder: inner.recordID)
            try saveNote(db, title: "m", text: "also", folder: folder.recordID)
            try saveNote(db, title: "keep", text: "stays")
            top = folder.recordID
        }) { m in
            // Load everything into the kernel's caches first.
            #expect(listing(m.root) == ["Doomed", "keep.md"])
            #expect(listing(m.path("Doomed")) == ["Inner", "m.md"])
            #expect(readFile(m.path("Doomed/Inner/n.md")) == "inside")
            #expect(statOf(m.path("Doomed/Inner")).1 == 0)
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            let result = try other.modify(deleting: [try #require(top)])
            #expect(result.deletedRecordIDs.count == 4)
            let gone = eventually(5) {
                statOf(m.path("Doomed")).1 == ENOENT && readFile(m.path("Doomed/Inner/n.md")) == nil
                    && listing(m.root) == ["keep.md"]
            }
            #expect(gone, "the deleted folder still shows after 2 s")
            #expect(statOf(m.path("Doomed")).1 == ENOENT)
            #expect(statOf(m.path("Doomed/Inner/n.md")).1 == ENOENT)
            #expect(try sh("cat \(shellQuoted(m.path("Doomed/Inner/n.md")))").status != 0)
            #expect(listing(m.root) == ["keep.md"])
            #expect(readFile(m.path("keep.md")) == "stays")
            #expect(fileRecordCount(m.database) == 1)
        }
    }

    @Test func sameSizeChangeElsewhereIsSeenByCat() throws {
        var id: RecordID?
        try withNotesMount(seed: { db in id = try saveNote(db, title: "same", text: "aaaa version 1").recordID }) { m in
            #expect(readFile(m.path("same.md")) == "aaaa version 1")
            #expect(try sh("cat \(shellQuoted(m.path("same.md")))").out == "aaaa version 1")
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            var record = try other.record(for: try #require(id))
            record["text"] = .string("bbbb version 2")
            try other.modify(saving: [record])
            let seen = eventually(5) { (try? sh("cat \(shellQuoted(m.path("same.md")))").out) == "bbbb version 2" }
            #expect(seen, "cat still shows the old bytes after 2 s")
            #expect(readFile(m.path("same.md")) == "bbbb version 2")
        }
    }

    @Test func newAndRenamedRecordsElsewhereShowUp() throws {
        var id: RecordID?
        try withNotesMount(seed: { db in id = try saveNote(db, title: "before", text: "x").recordID }) { m in
            #expect(listing(m.root) == ["before.md"])
            #expect(statOf(m.path("before.md")).1 == 0)
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            var record = try other.record(for: try #require(id))
            record["title"] = .string("after")
            try other.modify(saving: [record, Note(title: "added", text: "new").record])
            let seen = eventually(5) {
                listing(m.root) == ["added.md", "after.md"] && statOf(m.path("before.md")).1 == ENOENT
            }
            #expect(seen, "listing after 2 s: \(listing(m.root) ?? [])")
            #expect(readFile(m.path("added.md")) == "new")
            #expect(recordName(m.path("after.md")) == id?.recordName)
        }
    }

    @Test func changeElsewhereWhileOpenIsNotOverwritten() throws {
        // The open file was loaded before the other change: its save must not silently drop it.
        var id: RecordID?
        try withNotesMount(seed: { db in id = try saveNote(db, title: "c", text: "base").recordID }) { m in
            let fd = open(m.path("c.md"), O_RDWR)
            #expect(fd >= 0)
            #expect(pwrite(fd, "mine", 4, 0) == 4)
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            var record = try other.record(for: try #require(id))
            record["text"] = .string("theirs")
            try other.modify(saving: [record])
            #expect(eventually(5) { note(m.database, recordName: id!.recordName)?.text == "theirs" })
            let closed = close(fd) == 0 ? 0 : errno
            // DESIGN §4: the save is refused with ESTALE at close; the other change stays.
            #expect(closed == ESTALE)
            #expect(note(m.database, recordName: id!.recordName)?.text == "theirs")
            // The refused bytes are kept as a conflict copy beside it, and the file shows the other
            // change and takes writes again.
            let copy = "c (conflict \(ConflictName.day(Date())) \(ConflictName.hostName())).md"
            #expect(eventually(5) { listing(m.root) == [copy, "c.md"] }, "\(listing(m.root) ?? [])")
            #expect(readFile(m.path(copy)) == "mine")
            #expect(readFile(m.path("c.md")) == "theirs")
            #expect(statOf(m.path("c.md")).0?.st_size == 6)
            #expect(writeFile(m.path("c.md"), "later\n") == 0)
            #expect(note(m.database, recordName: id!.recordName)?.text == "later\n")
            #expect(readFile(m.path("c.md")) == "later\n")
        }
    }
}

/// Open files across other operations: unlink, rename, chmod and truncate while open; changes
/// from elsewhere while a file is open or was truncated; bad note content; long titles; statfs.

import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct OpenFileTests {
    @Test func unlinkedFileStaysReadableThroughAnOpenDescriptor() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("r.md"), "still here") == 0)
            let reader = open(m.path("r.md"), O_RDONLY)
            #expect(reader >= 0)
            defer { close(reader) }
            #expect(unlink(m.path("r.md")) == 0)
            #expect(statOf(m.path("r.md")).1 == ENOENT)
            // POSIX: the bytes stay readable until the last close.
            #expect(readAll(reader).map { String(decoding: $0, as: UTF8.self) } == "still here")
            var st = stat()
            #expect(fstat(reader, &st) == 0)
            #expect(fileRecordCount(m.database) == 0)
        }
    }

    @Test func unlinkedFileStaysWritableThroughAnOpenDescriptor() throws {
        try withNotesMount { m in
            let fd = open(m.path("w.md"), O_CREAT | O_RDWR, 0o644)
            #expect(fd >= 0)
            #expect(write(fd, "abc", 3) == 3)
            #expect(unlink(m.path("w.md")) == 0)
            #expect(pwrite(fd, "def", 3, 3) == 3)
            #expect(readAll(fd).map { String(decoding: $0, as: UTF8.self) } == "abcdef")
            #expect(close(fd) == 0)
            #expect(fileRecordCount(m.database) == 0)
            #expect(listing(m.root) == [])
        }
    }

    @Test func renameWhileOpenAndDirtySavesAtClose() throws {
        try withNotesMount { m in
            #expect(mkdir(m.path("dir"), 0o755) == 0)
            let fd = open(m.path("draft.md"), O_CREAT | O_WRONLY, 0o644)
            #expect(fd >= 0)
            #expect(write(fd, "written before the rename", 25) == 25)
            #expect(rename(m.path("draft.md"), m.path("final.md")) == 0)
            #expect(write(fd, ", and after", 11) == 11)
            let closed = close(fd) == 0 ? 0 : errno
            #expect(closed == 0, "close after a rename of the open file: errno \(closed)")
            #expect(readFile(m.path("final.md")) == "written before the rename, and after")
            #expect(note(m.database, titled: "final")?.text == "written before the rename, and after")
            // Moving to another folder while open and dirty.
            let second = open(m.path("final.md"), O_WRONLY | O_APPEND)
            #expect(second >= 0)
            #expect(write(second, "!", 1) == 1)
            #expect(rename(m.path("final.md"), m.path("dir/final.md")) == 0)
            let secondClosed = close(second) == 0 ? 0 : errno
            #expect(secondClosed == 0, "close after a move of the open file: errno \(secondClosed)")
            #expect(note(m.database, titled: "final")?.text == "written before the rename, and after!")
            #expect(fileRecordCount(m.database) == 1)
        }
    }

    @Test func chmodAndTouchWhileOpenAndDirtyKeepTheBytes() throws {
        try withNotesMount { m in
            let fd = open(m.path("c.md"), O_CREAT | O_WRONLY, 0o644)
            #expect(fd >= 0)
            #expect(write(fd, "content", 7) == 7)
            #expect(fchmod(fd, 0o600) == 0)
            #expect(chmod(m.path("c.md"), 0o640) == 0)
            #expect(close(fd) == 0)
            #expect(note(m.database, titled: "c")?.text == "content")
            #expect(statOf(m.path("c.md")).0?.st_mode == S_IFREG | 0o640)
        }
    }

    @Test func externalChangeIsSeenWhileAnotherProcessHoldsTheFileOpenForWriting() throws {
        var id: RecordID?
        try withNotesMount(seed: { db in id = try saveNote(db, title: "held", text: "version 1").recordID }) { m in
            // An editor keeps the note open for writing but has not written.
            let held = open(m.path("held.md"), O_RDWR)
            #expect(held >= 0)
            defer { close(held) }
            #expect(readFile(m.path("held.md")) == "version 1")
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            var record = try other.record(for: try #require(id))
            record["text"] = .string("version 2")
            try other.modify(saving: [record])
            let seen = eventually(5) { (try? sh("cat \(shellQuoted(m.path("held.md")))").out) == "version 2" }
            #expect(seen, "cat shows \(readFile(m.path("held.md")) ?? "nil") 5 s after the change elsewhere")
        }
    }

    @Test func externalChangeIsSeenAfterATruncateByPath() throws {
        var id: RecordID?
        try withNotesMount(seed: { db in id = try saveNote(db, title: "cut", text: "long original text").recordID }) { m in
            #expect(truncate(m.path("cut.md"), 4) == 0)
            #expect(readFile(m.path("cut.md")) == "long")
            #expect(note(m.database, recordName: id!.recordName)?.text == "long")
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            var record = try other.record(for: try #require(id))
            record["text"] = .string("changed elsewhere")
            try other.modify(saving: [record])
            let seen = eventually(5) { (try? sh("cat \(shellQuoted(m.path("cut.md")))").out) == "changed elsewhere" }
            #expect(seen, "cat shows \(readFile(m.path("cut.md")).debugDescription) 5 s after the change elsewhere")
            // And a later write through the mount saves (no stale buffer, no ESTALE).
            #expect(writeFile(m.path("cut.md"), "written here") == 0)
            #expect(note(m.database, recordName: id!.recordName)?.text == "written here")
        }
    }

    @Test func invalidUTF8InANoteIsSavedAsBytes() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("u.md"), "valid text") == 0)
            let fd = open(m.path("u.md"), O_WRONLY | O_TRUNC)
            #expect(fd >= 0)
            let bad: [UInt8] = [0x61, 0xFF, 0x62]
            #expect(write(fd, bad, bad.count) == 3)
            #expect(close(fd) == 0, "close of a note that is not UTF-8: errno \(errno)")
            // Kept losslessly in the note's content asset, not refused.
            #expect(note(m.database, titled: "u")?.content?.size == 3)
            #expect(readBytes(m.path("u.md")) == bad)
            // The same bytes as an attachment are fine too.
            #expect(writeBytes(m.path("u.bin"), [0x61, 0xFF, 0x62]) == 0)
            #expect(readBytes(m.path("u.bin")) == [0x61, 0xFF, 0x62])
        }
    }

    @Test func longTitlesAreCutToAUsableName() throws {
        let title = String(repeating: "é", count: 200)  // 400 bytes
        try withNotesMount(seed: { db in try saveNote(db, title: title, text: "long") }) { m in
            let names = try #require(listing(m.root))
            #expect(names.count == 1)
            let name = try #require(names.first)
            #expect(name.utf8.count <= 255)
            #expect(name.hasSuffix(".md"))
            #expect(readFile(m.path(name)) == "long")
            #expect(writeFile(m.path(name), "longer") == 0)
            #expect(notes(m.database).first?.title == title, "writing the file must not change the title")
        }
    }

    @Test func statfsReportsTheNameLimit() throws {
        try withNotesMount { m in
            var stats = statvfs()
            #expect(statvfs(m.root, &stats) == 0)
            #expect(stats.f_namemax == 255)
            #expect(stats.f_bsize > 0)
            let df = try sh("df -P \(shellQuoted(m.root))")
            #expect(df.status == 0, "\(df)")
        }
    }
}

/// `open(dir, O_TMPFILE)` and `linkat` of it: an unnamed file that becomes a note only when linked,
/// keeping its inode, and leaves nothing when closed unlinked.

import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

private let tmpfileFlag: Int32 = 0o20_000_000 | O_DIRECTORY  // O_TMPFILE (__O_TMPFILE | O_DIRECTORY)
private let emptyPath: Int32 = 0x1000  // AT_EMPTY_PATH

@Suite(.tags(.mount), .needsFUSE) struct TmpfileTests {
    @Test func anUnnamedFileBecomesANoteWhenLinked() throws {
        try withNotesMount { m in
            #expect(mkdir(m.path("dir"), 0o755) == 0)
            let fd = open(m.path("dir"), tmpfileFlag | O_RDWR, 0o640)
            #expect(fd >= 0, "O_TMPFILE: \(String(cString: strerror(errno)))")
            guard fd >= 0 else { return }
            defer { close(fd) }
            #expect(write(fd, "hello", 5) == 5)
            #expect(listing(m.path("dir")) == [], "unnamed: in no listing")
            var st = stat()
            #expect(fstat(fd, &st) == 0)
            #expect(linkat(fd, "", AT_FDCWD, m.path("dir/Saved.md"), emptyPath) == 0, "linkat: \(String(cString: strerror(errno)))")
            #expect(write(fd, " world", 6) == 6)
            #expect(fsync(fd) == 0)
            #expect(listing(m.path("dir")) == ["Saved.md"])
            #expect(readFile(m.path("dir/Saved.md")) == "hello world")
            #expect(statOf(m.path("dir/Saved.md")).0?.st_ino == st.st_ino, "the linked file is the open one")
            #expect(statOf(m.path("dir/Saved.md")).0.map { $0.st_mode & 0o777 } == 0o640)
            let note = try #require(try m.database.query(Query(recordType: Note.recordType)).records.first)
            #expect(note["text"]?.stringValue == "hello world")
        }
    }

    @Test func anUnnamedFileClosedWithoutALinkLeavesNothing() throws {
        try withNotesMount { m in
            let fd = open(m.root, tmpfileFlag | O_WRONLY, 0o600)
            #expect(fd >= 0, "O_TMPFILE: \(String(cString: strerror(errno)))")
            #expect(write(fd, "scratch", 7) == 7)
            #expect(close(fd) == 0)
            #expect(listing(m.root) == [])
            let notes = try m.database.query(Query(recordType: Note.recordType)).records
            let attachments = try m.database.query(Query(recordType: Attachment.recordType)).records
            #expect(notes.isEmpty && attachments.isEmpty)
        }
    }

    @Test func refusedWhereNoFileMayBeMade() throws {
        try withNotesMount { m in
            #expect(mkdir(m.path("fixed"), 0o755) == 0)
            let chattr = try sh("chattr +i \(shellQuoted(m.path("fixed")))")
            #expect(chattr.status == 0)
            #expect(errnoOf { open(m.path("fixed"), tmpfileFlag | O_WRONLY, 0o600) } == EPERM)
            #expect(errnoOf { open(m.path(".recent"), tmpfileFlag | O_WRONLY, 0o600) } == EROFS)
        }
    }
}

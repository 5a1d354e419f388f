/// Regular files through system calls: create, read, write, append, truncate, sparse writes, unlink,
/// shared buffers between handles.

import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct FileTests {
    @Test func createWriteReadSavesOneNote() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("Hello.md"), "hello, world\n") == 0)
            #expect(readFile(m.path("Hello.md")) == "hello, world\n")
            let all = notes(m.database)
            #expect(all.count == 1)
            #expect(all.first?.title == "Hello")
            #expect(all.first?.text == "hello, world\n")
            #expect(recordName(m.path("Hello.md")) == all.first?.recordID.recordName)
            // Any other name is an attachment.
            #expect(writeBytes(m.path("data.bin"), [0, 1, 2, 255]) == 0)
            #expect(readBytes(m.path("data.bin")) == [0, 1, 2, 255])
            let attachments = m.database.queryMetadata(Query(recordType: Attachment.recordType))
            #expect(attachments.count == 1)
            #expect(attachments.first?.record["name"]?.stringValue == "data.bin")
        }
    }

    @Test func overwriteKeepsTheRecord() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("n.md"), "first version, long") == 0)
            let name = recordName(m.path("n.md"))
            #expect(writeFile(m.path("n.md"), "second") == 0)
            #expect(readFile(m.path("n.md")) == "second")
            #expect(recordName(m.path("n.md")) == name)
            #expect(fileRecordCount(m.database) == 1)
            #expect(note(m.database, recordName: name ?? "")?.text == "second")
        }
    }

    @Test func appendWithOAppend() throws {
        try withNotesMount { m in
            let path = m.path("log.md")
            #expect(writeFile(path, "abc") == 0)
            for piece in ["def", "ghi"] {
                let fd = open(path, O_WRONLY | O_APPEND)
                #expect(fd >= 0)
                // The offset given is ignored for O_APPEND: the bytes go at the end.
                #expect(write(fd, piece, 3) == 3)
                #expect(close(fd) == 0)
            }
            #expect(readFile(path) == "abcdefghi")
            #expect(note(m.database, titled: "log")?.text == "abcdefghi")
        }
    }

    @Test func truncateShrinksAndZeroFills() throws {
        try withNotesMount { m in
            let path = m.path("t.md")
            #expect(writeFile(path, "abcdef") == 0)
            // ftruncate on an open handle, saved at close.
            let fd = open(path, O_RDWR)
            #expect(fd >= 0)
            #expect(ftruncate(fd, 2) == 0)
            var st = stat()
            #expect(fstat(fd, &st) == 0)
            #expect(st.st_size == 2)
            #expect(close(fd) == 0)
            #expect(readFile(path) == "ab")
            #expect(note(m.database, titled: "t")?.text == "ab")
            // truncate(2) to a larger size: zero fill.
            #expect(truncate(path, 6) == 0)
            #expect(readBytes(path) == Array("ab".utf8) + [0, 0, 0, 0])
            #expect(statOf(path).0?.st_size == 6)
            // Saved at once, or at the release of readFile's handle if the kernel sends that late.
            #expect(eventually(10) { note(m.database, titled: "t")?.text == "ab\0\0\0\0" })
            // O_TRUNC empties it.
            let truncating = open(path, O_WRONLY | O_TRUNC)
            #expect(truncating >= 0)
            #expect(close(truncating) == 0)
            #expect(statOf(path).0?.st_size == 0)
            #expect(readFile(path) == "")
            #expect(note(m.database, titled: "t")?.text == "")
            #expect(fileRecordCount(m.database) == 1)
        }
    }

    @Test func sparseWritePastTheEndZeroFills() throws {
        try withNotesMount { m in
            let path = m.path("sparse.bin")
            #expect(writeFile(path, "abc") == 0)
            let fd = open(path, O_WRONLY)
            #expect(fd >= 0)
            #expect(pwrite(fd, "xy", 2, 10) == 2)
            #expect(close(fd) == 0)
            let expected = Array("abc".utf8) + [UInt8](repeating: 0, count: 7) + Array("xy".utf8)
            #expect(statOf(path).0?.st_size == 12)
            #expect(readBytes(path) == expected)
            let attachment = m.database.queryMetadata(Query(recordType: Attachment.recordType)).first
            let asset = try #require(attachment?.record["content"]?.assetValue)
            #expect([UInt8](try m.database.assetData(asset)) == expected)
        }
    }

    @Test func largeFileRoundTrips() throws {
        // Past the 8 MiB spill threshold of the open-file buffer.
        try withNotesMount { m in
            let bytes = (0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) }
            #expect(writeBytes(m.path("big.bin"), bytes) == 0)
            #expect(statOf(m.path("big.bin")).0?.st_size == off_t(bytes.count))
            #expect(readBytes(m.path("big.bin")) == bytes)
        }
    }

    @Test func unlinkDeletesTheRecord() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("gone.md"), "bye") == 0)
            #expect(writeFile(m.path("kept.md"), "stay") == 0)
            #expect(fileRecordCount(m.database) == 2)
            #expect(unlink(m.path("gone.md")) == 0)
            #expect(statOf(m.path("gone.md")).1 == ENOENT)
            #expect(note(m.database, titled: "gone") == nil)
            #expect(fileRecordCount(m.database) == 1)
            #expect(errnoOf { unlink(m.path("gone.md")) } == ENOENT)
            #expect(listing(m.root) == ["kept.md"])
        }
    }

    @Test func readerSeesWriterBytesBeforeClose() throws {
        try withNotesMount { m in
            let path = m.path("shared.md")
            #expect(writeFile(path, "old") == 0)
            let writer = open(path, O_RDWR)
            #expect(writer >= 0)
            #expect(pwrite(writer, "new bytes", 9, 0) == 9)
            let reader = open(path, O_RDONLY)
            #expect(reader >= 0)
            defer { close(reader) }
            #expect(readAll(reader).map { String(decoding: $0, as: UTF8.self) } == "new bytes")
            // Not saved before close…
            #expect(note(m.database, titled: "shared")?.text == "old")
            // …and saved after.
            #expect(close(writer) == 0)
            #expect(note(m.database, titled: "shared")?.text == "new bytes")
        }
        try withNotesMount { m in
            let path = m.path("two-writers.md")
            let a = open(path, O_CREAT | O_RDWR, 0o644)
            let b = open(path, O_RDWR)
            #expect(a >= 0 && b >= 0)
            #expect(pwrite(a, "AAAA", 4, 0) == 4)
            #expect(pwrite(b, "BB", 2, 4) == 2)
            #expect(readAll(a).map { String(decoding: $0, as: UTF8.self) } == "AAAABB")
            #expect(close(a) == 0)
            #expect(close(b) == 0)
            #expect(note(m.database, titled: "two-writers")?.text == "AAAABB")
            #expect(fileRecordCount(m.database) == 1)
        }
    }

    @Test func closeSavesAndReadsBackAfterRemount() throws {
        try withDatabaseDirectory { db in
            try withNotesMount(databasePath: db) { m in
                #expect(writeFile(m.path("persist.md"), "kept across mounts") == 0)
            }
            try withNotesMount(databasePath: db) { m in
                #expect(readFile(m.path("persist.md")) == "kept across mounts")
            }
        }
    }

    @Test func fsyncSavesWithoutClose() throws {
        try withNotesMount { m in
            let path = m.path("synced.md")
            let fd = open(path, O_CREAT | O_WRONLY, 0o644)
            #expect(fd >= 0)
            defer { close(fd) }
            #expect(write(fd, "durable", 7) == 7)
            #expect(fsync(fd) == 0)
            #expect(note(m.database, titled: "synced")?.text == "durable")
        }
    }
}

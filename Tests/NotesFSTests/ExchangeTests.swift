/// `renameat2(RENAME_EXCHANGE)`: two names swap their files atomically; both records keep their
/// identity (record name, inode, bytes, creation date).

import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

private let exchangeFlag: UInt32 = 2  // RENAME_EXCHANGE (not visible through Glibc)
private let whiteoutFlag: UInt32 = 4  // RENAME_WHITEOUT

private func inodeOf(_ path: String) -> ino_t? { statOf(path).0?.st_ino }

@Suite(.tags(.mount), .needsFUSE) struct ExchangeTests {
    @Test func twoNotesInTwoFoldersSwapAndKeepTheirRecords() throws {
        try withNotesMount { m in
            #expect(mkdir(m.path("A"), 0o755) == 0 && mkdir(m.path("B"), 0o755) == 0)
            #expect(writeFile(m.path("A/one.md"), "first") == 0)
            #expect(writeFile(m.path("B/two.md"), "second") == 0)
            let (firstName, secondName) = (recordName(m.path("A/one.md")), recordName(m.path("B/two.md")))
            let (firstInode, secondInode) = (inodeOf(m.path("A/one.md")), inodeOf(m.path("B/two.md")))
            #expect(renameErrno(m.path("A/one.md"), m.path("B/two.md"), flags: exchangeFlag) == 0)
            #expect(readFile(m.path("A/one.md")) == "second")
            #expect(readFile(m.path("B/two.md")) == "first")
            #expect(recordName(m.path("B/two.md")) == firstName && recordName(m.path("A/one.md")) == secondName)
            #expect(inodeOf(m.path("B/two.md")) == firstInode && inodeOf(m.path("A/one.md")) == secondInode)
            #expect(listing(m.path("A")) == ["one.md"] && listing(m.path("B")) == ["two.md"])
            // What the store holds: the first note is now titled "two" in B.
            let first = try Note(record: try m.database.record(for: RecordID(recordName: try #require(firstName))))
            #expect(first.title == "two")
        }
    }

    @Test func aFileAndADirectorySwap() throws {
        try withNotesMount { m in
            #expect(mkdir(m.path("dir"), 0o755) == 0)
            #expect(writeFile(m.path("dir/inner.txt"), "in") == 0)
            #expect(writeFile(m.path("file"), "plain") == 0)
            #expect(renameErrno(m.path("dir"), m.path("file"), flags: exchangeFlag) == 0)
            #expect(readFile(m.path("file/inner.txt")) == "in")
            #expect(readFile(m.path("dir")) == "plain")
            #expect(listing(m.root) == ["dir", "file"])
        }
    }

    @Test func refusalsAreClear() throws {
        try withNotesMount { m in
            #expect(mkdir(m.path("top"), 0o755) == 0)
            #expect(mkdir(m.path("top/sub"), 0o755) == 0)
            #expect(writeFile(m.path("n.md"), "note") == 0)
            #expect(writeFile(m.path("a.txt"), "attachment") == 0)
            #expect(renameErrno(m.path("n.md"), m.path("missing.md"), flags: exchangeFlag) == ENOENT)
            #expect(renameErrno(m.path("n.md"), m.path("a.txt"), flags: exchangeFlag) == EINVAL, "a note is named *.md")
            #expect(renameErrno(m.path("top"), m.path("top/sub"), flags: exchangeFlag) == EINVAL)
            #expect(renameErrno(m.path("n.md"), m.path("a.txt"), flags: exchangeFlag | 1) == EINVAL, "with NOREPLACE")
            #expect(renameErrno(m.path("n.md"), m.path("x.md"), flags: whiteoutFlag) == EINVAL)
            #expect(readFile(m.path("n.md")) == "note" && readFile(m.path("a.txt")) == "attachment")
        }
    }
}

/// atime, mtime and ctime as POSIX says (utimensat sets atime and mtime apart; chmod, chown,
/// write and truncate move ctime; a read moves atime relatime-style; a directory's times move with
/// its entries) and a directory's link count; what is saved survives a remount.

import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

private let old = 946_684_800  // 2000-01-01

/// Sets atime and mtime of `path` (seconds, nanoseconds).
private func setTimes(_ path: String, atime: (Int, Int), mtime: (Int, Int)) -> Int32 {
    var times = [timespec(tv_sec: atime.0, tv_nsec: atime.1), timespec(tv_sec: mtime.0, tv_nsec: mtime.1)]
    return errnoOf { utimensat(AT_FDCWD, path, &times, 0) }
}

@Suite(.tags(.mount), .needsFUSE) struct TimesTests {
    @Test func utimensatSetsAccessAndModificationApartAndChmodMovesOnlyCtimeAcrossARemount() throws {
        try withDatabaseDirectory { db in
            var ctime = 0
            try withNotesMount(databasePath: db) { m in
                #expect(writeFile(m.path("t.md"), "x") == 0)
                #expect(setTimes(m.path("t.md"), atime: (old, 123), mtime: (old + 60, 456)) == 0)
                let set = try #require(statOf(m.path("t.md")).0)
                #expect(set.st_atim.tv_sec == old && set.st_atim.tv_nsec == 123)
                #expect(set.st_mtim.tv_sec == old + 60 && set.st_mtim.tv_nsec == 456)
                #expect(set.st_ctim.tv_sec > old + 60)  // utimensat is a change too
                usleep(20_000)
                #expect(chmod(m.path("t.md"), 0o600) == 0)
                let after = try #require(statOf(m.path("t.md")).0)
                #expect(nanoseconds(after.st_ctim) > nanoseconds(set.st_ctim))
                #expect(nanoseconds(after.st_mtim) == nanoseconds(set.st_mtim))
                #expect(nanoseconds(after.st_atim) == nanoseconds(set.st_atim))
                ctime = nanoseconds(after.st_ctim)
            }
            try withNotesMount(databasePath: db) { m in
                let st = try #require(statOf(m.path("t.md")).0)
                #expect(st.st_atim.tv_sec == old && st.st_atim.tv_nsec == 123)
                #expect(st.st_mtim.tv_sec == old + 60 && st.st_mtim.tv_nsec == 456)
                #expect(nanoseconds(st.st_ctim) == ctime)
                #expect(st.st_mode & 0o7777 == 0o600)
            }
        }
    }

    @Test func ftruncateOfAnOpenFileMovesMtimeAndCtimeBeforeAndAfterClose() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("f"), "12345678") == 0)
            #expect(setTimes(m.path("f"), atime: (old, 0), mtime: (old, 0)) == 0)
            let fd = open(m.path("f"), O_WRONLY)
            #expect(fd >= 0)
            #expect(ftruncate(fd, 3) == 0)
            var open = stat()
            #expect(fstat(fd, &open) == 0)
            #expect(open.st_size == 3)
            #expect(open.st_mtim.tv_sec > old)
            #expect(open.st_ctim.tv_sec > old)
            #expect(close(fd) == 0)
            let closed = try #require(statOf(m.path("f")).0)
            #expect(closed.st_mtim.tv_sec > old)
            #expect(closed.st_ctim.tv_sec > old)
            #expect(closed.st_atim.tv_sec == old)  // neither truncate nor write reads
            #expect(readFile(m.path("f")) == "123")
        }
    }

    @Test func aReadMovesAtimeRelatimeStyleAndTheNextSaveKeepsIt() throws {
        try withDatabaseDirectory { db in
            var atime = 0
            try withNotesMount(databasePath: db) { m in
                #expect(writeFile(m.path("r.md"), "read me") == 0)
                #expect(setTimes(m.path("r.md"), atime: (old, 0), mtime: (old, 0)) == 0)
                #expect(readFile(m.path("r.md")) == "read me")
                let first = try #require(statOf(m.path("r.md")).0)
                #expect(first.st_atim.tv_sec > old)
                #expect(first.st_mtim.tv_sec == old)
                // atime is now after mtime and ctime and recent: another read leaves it (relatime).
                #expect(readFile(m.path("r.md")) == "read me")
                let second = try #require(statOf(m.path("r.md")).0)
                #expect(nanoseconds(second.st_atim) == nanoseconds(first.st_atim))
                atime = nanoseconds(first.st_atim)
                #expect(chmod(m.path("r.md"), 0o640) == 0)  // a save: the read's atime goes with it
            }
            try withNotesMount(databasePath: db) { m in
                let st = try #require(statOf(m.path("r.md")).0)
                #expect(nanoseconds(st.st_atim) == atime)
                #expect(st.st_mtim.tv_sec == old)
            }
        }
    }

    @Test func aDirectorysTimesMoveWithItsEntriesAndItsLinkCountCountsSubdirectories() throws {
        try withDatabaseDirectory { db in
            var mtime = 0
            try withNotesMount(databasePath: db) { m in
                #expect(mkdir(m.path("d"), 0o755) == 0)
                #expect(statOf(m.path("d")).0?.st_nlink == 2)
                for (what, change) in [
                    ("create", { writeFile(m.path("d/x.md"), "x") }), ("rename", { rename(m.path("d/x.md"), m.path("d/y.md")) }),
                    ("unlink", { unlink(m.path("d/y.md")) }), ("mkdir", { mkdir(m.path("d/s"), 0o755) }),
                    ("rmdir", { rmdir(m.path("d/s")) }),
                ] {
                    #expect(setTimes(m.path("d"), atime: (old, 0), mtime: (old, 0)) == 0)
                    #expect(change() == 0, "\(what)")
                    let st = try #require(statOf(m.path("d")).0)
                    #expect(st.st_mtim.tv_sec > old, "\(what) moves the directory's mtime")
                    #expect(st.st_ctim.tv_sec > old, "\(what) moves the directory's ctime")
                }
                #expect(mkdir(m.path("d/a"), 0o755) == 0)
                #expect(mkdir(m.path("d/b"), 0o755) == 0)
                #expect(writeFile(m.path("d/f.md"), "a file is no link") == 0)
                #expect(statOf(m.path("d")).0?.st_nlink == 4)
                #expect(rename(m.path("d/b"), m.path("d/a/b")) == 0)
                #expect(statOf(m.path("d")).0?.st_nlink == 3)
                #expect(statOf(m.path("d/a")).0?.st_nlink == 3)
                mtime = nanoseconds(try #require(statOf(m.path("d")).0).st_mtim)
            }
            try withNotesMount(databasePath: db) { m in
                let st = try #require(statOf(m.path("d")).0)
                #expect(st.st_nlink == 3)
                #expect(nanoseconds(st.st_mtim) == mtime)
                #expect(statOf(m.path("d/a")).0?.st_nlink == 3)
            }
        }
    }

    /// chmod and utimensat on a file with unsaved bytes (`cp -p` order: write, then set times and
    /// mode before close) keep all of it: the mode, the atime, and the mtime over the close's save.
    @Test func modeAndTimesSetWhileWritingSurviveTheClose() throws {
        try withNotesMount { m in
            let fd = open(m.path("w.md"), O_CREAT | O_WRONLY, 0o644)
            #expect(fd >= 0)
            #expect(write(fd, "unsaved", 7) == 7)
            var times = [timespec(tv_sec: old, tv_nsec: 5), timespec(tv_sec: old + 1, tv_nsec: 7)]
            #expect(futimens(fd, &times) == 0)
            #expect(fchmod(fd, 0o600) == 0)
            #expect(close(fd) == 0)
            let st = try #require(statOf(m.path("w.md")).0)
            #expect(st.st_mode == S_IFREG | 0o600)
            #expect(st.st_atim.tv_sec == old && st.st_atim.tv_nsec == 5)
            #expect(st.st_mtim.tv_sec == old + 1 && st.st_mtim.tv_nsec == 7)
            #expect(readFile(m.path("w.md")) == "unsaved")
        }
    }
}

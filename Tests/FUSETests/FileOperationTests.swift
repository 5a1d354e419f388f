/// Mount tests for files: create/write/read, stat, truncate, utimensat, symlinks, hard links.

import CFuse
import FUSE
import Foundation
import Glibc
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct FileOperationTests {
    @Test func writeThenReadBack() throws {
        try withMount { _, root in
            let path = root + "/hello.txt"
            #expect(writeFile(path, "hello, fuse") == 0)
            #expect(readFile(path) == "hello, fuse")
            let (st, error) = statOf(path)
            #expect(error == 0)
            #expect(st?.st_size == 11)
            #expect(st.map { $0.st_mode & S_IFMT } == S_IFREG)
            #expect(st.map { $0.st_mode & 0o777 } == 0o644)
        }
    }

    @Test func missingNameIsENOENT() throws {
        try withMount { _, root in
            #expect(statOf(root + "/nothing-here").1 == ENOENT)
            #expect(open(root + "/nothing-here", O_RDONLY) == -1 && errno == ENOENT)
        }
    }

    @Test(arguments: [EACCES, EIO, EPERM, EROFS])
    func thrownErrnoReachesTheCaller(_ code: Int32) throws {
        try withMount { _, root in
            #expect(statOf(root + "/errno-\(code)").1 == code)
        }
    }

    @Test func nonUTF8NameIsRefusedByTheFileSystem() throws {
        try withMount { _, root in
            var path = Array((root + "/bad-").utf8)
            path += [0xFF, 0xFE, 0]
            let fd = path.withUnsafeBufferPointer {
                $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o644) }
            }
            #expect(fd == -1)
            #expect(errno == EINVAL)
        }
    }

    @Test func truncateAndTimes() throws {
        try withMount { _, root in
            let path = root + "/t"
            #expect(writeFile(path, "0123456789") == 0)
            #expect(errnoOf { truncate(path, 4) } == 0)
            #expect(readFile(path) == "0123")
            var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 5), timespec(tv_sec: 1_234_567_890, tv_nsec: 42)]
            #expect(errnoOf { utimensat(AT_FDCWD, path, &times, 0) } == 0)
            let (st, _) = statOf(path)
            #expect(st?.st_mtim.tv_sec == 1_234_567_890)
            #expect(st?.st_mtim.tv_nsec == 42)
            #expect(st?.st_atim.tv_sec == 1_000_000_000)
            let before = time(nil)
            times = [timespec(tv_sec: 0, tv_nsec: notesfs_utime_now()), timespec(tv_sec: 0, tv_nsec: notesfs_utime_omit())]
            #expect(errnoOf { utimensat(AT_FDCWD, path, &times, 0) } == 0)
            let (after, _) = statOf(path)
            #expect((after?.st_atim.tv_sec ?? 0) >= before)
            #expect(after?.st_mtim.tv_sec == 1_234_567_890)
        }
    }

    @Test func symlinkAndHardLink() throws {
        try withMount { _, root in
            #expect(writeFile(root + "/target", "data") == 0)
            #expect(errnoOf { symlink("target", root + "/link") } == 0)
            var buffer = [CChar](repeating: 0, count: 64)
            let count = readlink(root + "/link", &buffer, buffer.count)
            #expect(count == 6)
            #expect(String(decoding: buffer[..<max(count, 0)].map { UInt8(bitPattern: $0) }, as: UTF8.self) == "target")
            #expect(readFile(root + "/link") == "data")
            #expect(errnoOf { link(root + "/target", root + "/hard") } == 0)
            #expect(statOf(root + "/target").0?.st_nlink == 2)
            #expect(errnoOf { link(root + "/target", root + "/hard") } == EEXIST)
        }
    }

    @Test func statfsReportsTheFileSystemNumbers() throws {
        try withMount { _, root in
            var st = statvfs()
            #expect(statvfs(root, &st) == 0)
            #expect(st.f_blocks == 1000)
            #expect(st.f_bfree == 600)
            #expect(st.f_namemax == 255)
        }
    }
}

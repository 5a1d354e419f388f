/// `fallocate(2)` and `posix_fallocate(3)` through the mount: mode 0 grows a file with zeros,
/// `FALLOC_FL_KEEP_SIZE` keeps its size, the other modes are refused with `EOPNOTSUPP`, and the
/// bytes survive close and remount.

import FUSE
import Foundation
import Glibc
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct AllocateTests {
    @Test func posixFallocateGrowsAFileWithZerosThatSurviveRemount() throws {
        try withDatabaseDirectory { db in
            try withNotesMount(databasePath: db) { m in
                for name in ["a.bin", "n.md"] {
                    let fd = open(m.path(name), O_CREAT | O_RDWR | O_TRUNC, 0o644)
                    #expect(fd >= 0)
                    #expect(pwrite(fd, "head", 4, 0) == 4)
                    #expect(posix_fallocate(fd, 0, 3 << 20) == 0)
                    var st = stat()
                    #expect(fstat(fd, &st) == 0 && st.st_size == 3 << 20)
                    // A range inside the file changes nothing.
                    #expect(posix_fallocate(fd, 10, 100) == 0)
                    #expect(fstat(fd, &st) == 0 && st.st_size == 3 << 20)
                    #expect(posix_fallocate(fd, -1, 10) == EINVAL)
                    #expect(posix_fallocate(fd, 0, 0) == EINVAL)
                    #expect(posix_fallocate(fd, off_t(1) << 50, 1) == EFBIG)
                    #expect(close(fd) == 0)
                }
            }
            try withNotesMount(databasePath: db) { m in
                for name in ["a.bin", "n.md"] {
                    let bytes = readBytes(m.path(name))
                    #expect(bytes?.count == 3 << 20, "\(name)")
                    #expect(bytes.map { Array($0.prefix(4)) == Array("head".utf8) && $0.dropFirst(4).allSatisfy { $0 == 0 } } == true)
                }
            }
        }
    }

    @Test func fallocateModesAsUtilLinuxUsesThem() throws {
        try withNotesMount { m in
            let file = m.path("f.bin")
            #expect(writeFile(file, "0123456789") == 0)
            let grow = try run(["/usr/bin/fallocate", "-l", "1MiB", file])
            #expect(grow.status == 0, "\(grow)")
            #expect(statOf(file).0?.st_size == 1 << 20)
            let keep = try run(["/usr/bin/fallocate", "--keep-size", "-l", "8MiB", file])
            #expect(keep.status == 0, "\(keep)")
            #expect(statOf(file).0?.st_size == 1 << 20)
            for flag in ["--punch-hole", "--collapse-range", "--zero-range", "--insert-range"] {
                let refused = try run(["/usr/bin/fallocate", flag, "-o", "0", "-l", "4096", file])
                #expect(refused.status != 0, "\(flag)")
                // EOPNOTSUPP: "not supported" or "... mode is unsupported"
                #expect(refused.stderr.contains("supported"), "\(flag): \(refused)")
            }
            let bytes = readBytes(file)
            #expect(bytes.map { Array($0.prefix(10)) == Array("0123456789".utf8) && $0.count == 1 << 20 } == true)
            // The mount still answers.
            #expect(readFile(m.path("f.bin")).map { $0.hasPrefix("0123456789") } == true)
        }
    }

    @Test func rsyncPreallocateCopiesATree() throws {
        let source = makeTemporaryDirectory("allocsrc")
        defer { _ = try? FileManager.default.removeItem(atPath: source) }
        #expect(writeFile(source + "/note.md", "# Note\nbody\n") == 0)
        #expect(writeBytes(source + "/data.bin", (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }) == 0)
        try withNotesMount { m in
            let result = try run(["/usr/bin/rsync", "-r", "--preallocate", source + "/", m.root + "/"])
            #expect(result.status == 0, "\(result)")
            #expect(readFile(m.path("note.md")) == "# Note\nbody\n")
            #expect(readBytes(m.path("data.bin")) == readBytes(source + "/data.bin"))
        }
    }
}

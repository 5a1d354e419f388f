/// Whole reads and writes: `writeAll` and `readAll` with and without an offset, short only at
/// the end of the file; `readToEnd` stops at its limit.

import Foundation
import POSIX
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

struct ReadWriteTests {
    /// An unlinked temp file, open for reading and writing.
    private static func temporaryFile() throws -> Int32 {
        var template = Array((NSTemporaryDirectory() + "posix-rw-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        try #require(fd >= 0)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        return fd
    }

    @Test func writeAllThenReadAllAtOffsets() throws {
        let fd = try Self.temporaryFile()
        defer { close(fd) }
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try Syscall.writeAll(fd, bytes, path: "temp")
        try Syscall.writeAll(fd, [9, 9], at: 10, path: "temp")
        var expected = bytes
        expected[10] = 9
        expected[11] = 9
        let whole = try Syscall.read(fd, count: bytes.count + 100, at: 0, path: "temp")
        #expect(whole == expected)
        let tail = try Syscall.read(fd, count: 50, at: Int64(bytes.count - 20), path: "temp")
        #expect(tail == Array(expected.suffix(20)))
        #expect(lseek(fd, 0, SEEK_SET) == 0)
        let fromOffset = try Syscall.read(fd, count: 12, path: "temp")
        #expect(fromOffset == Array(expected.prefix(12)))
    }

    @Test func readToEndStopsAtItsLimit() throws {
        let fd = try Self.temporaryFile()
        defer { close(fd) }
        try Syscall.writeAll(fd, [UInt8](repeating: 7, count: 10_000), path: "temp")
        #expect(lseek(fd, 0, SEEK_SET) == 0)
        let bytes = try Syscall.readToEnd(fd, limit: 5000, path: "temp")
        #expect(bytes.count == 5000)
    }

    @Test func aFailedWriteNamesTheCallAndPath() {
        let error = #expect(throws: SystemCallError.self) { try Syscall.writeAll(-1, [1], path: "nowhere") }
        #expect(error == SystemCallError("write", path: "nowhere", errno: EBADF))
    }

    /// A sparse file read extent by extent into zeros gives the file back, and skips the hole
    /// where the filesystem reports holes.
    @Test func dataExtentsCoverTheDataAndSkipTheHole() throws {
        let fd = try Self.temporaryFile()
        defer { close(fd) }
        let page = [UInt8](repeating: 5, count: 4096)
        try Syscall.writeAll(fd, page, at: 0, path: "temp")
        try Syscall.writeAll(fd, page, at: 1 << 20, path: "temp")
        let size = Int64(1 << 20) + 4096
        var copy = [UInt8](repeating: 0, count: Int(size))
        var offset: Int64 = 0
        var extents: [(Int64, Int64)] = []
        while offset < size {
            let (start, end) = Syscall.dataExtent(fd, from: offset, size: size)
            if start >= size { break }
            let bytes = try Syscall.read(fd, count: Int(end - start), at: start, path: "temp")
            copy.replaceSubrange(Int(start)..<Int(start) + bytes.count, with: bytes)
            extents.append((start, end))
            offset = end
        }
        let whole = try Syscall.read(fd, count: Int(size), at: 0, path: "temp")
        #expect(copy == whole)
        if let first = extents.first, first.1 < size {
            #expect(extents.count == 2)
            #expect(extents.last.map { $0.0 > 4096 } == true)
        }
    }
}

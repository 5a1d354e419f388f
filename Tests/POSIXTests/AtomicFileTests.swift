/// Atomic durable writes: the target holds the new bytes, no temp file is left beside it (also
/// when the write fails), a failure leaves the old file as it was, and the mode is exact.

import Foundation
import POSIX
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

struct AtomicFileTests {
    /// A fresh directory for one test, removed after it.
    private static func withDirectory(_ body: (String) throws -> Void) throws {
        let path = NSTemporaryDirectory() + "posix-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        try body(path)
    }

    private static func names(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    @Test func replacesTheFileAndLeavesNoTempFile() throws {
        try Self.withDirectory { directory in
            let path = directory + "/state.json"
            try Data("old".utf8).write(to: URL(fileURLWithPath: path))
            let bytes = Array("new contents".utf8)
            try AtomicFile.write(path, bytes, temp: path + ".tmp-1")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bytes))
            #expect(try Self.names(in: directory) == ["state.json"])
        }
    }

    @Test func createsTheFileWithItsMode() throws {
        try Self.withDirectory { directory in
            let path = directory + "/new"
            try AtomicFile.write(path, [1, 2, 3], temp: path + ".tmp", mode: 0o600)
            var st = stat()
            #expect(stat(path, &st) == 0)
            #expect(st.st_mode & 0o777 == 0o600)
            #expect(st.st_size == 3)
        }
    }

    /// A failure in the body: the old file stays, the temp file is removed, the error is the body's.
    @Test func aFailedWriteKeepsTheOldFileAndRemovesTheTemp() throws {
        try Self.withDirectory { directory in
            let path = directory + "/target"
            try Data("old".utf8).write(to: URL(fileURLWithPath: path))
            var thrown: SystemCallError?
            do {
                try AtomicFile.write(path, temp: path + ".tmp", error: { $0 }) { (fd) throws(SystemCallError) in
                    _ = write(fd, "partial", 7)
                    throw SystemCallError("refused", path: path, errno: ENOSPC)
                }
            } catch let failure as SystemCallError { thrown = failure } catch {}
            #expect(thrown?.call == "refused")
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
            #expect(try Self.names(in: directory) == ["target"])
        }
    }

    /// The rename fails (a directory stands at the target): the temp file is removed and the
    /// error names the call and the target.
    @Test func aFailedRenameRemovesTheTemp() throws {
        try Self.withDirectory { directory in
            let path = directory + "/busy"
            try FileManager.default.createDirectory(atPath: path + "/inside", withIntermediateDirectories: true)
            let error = #expect(throws: SystemCallError.self) {
                try AtomicFile.write(path, [1], temp: path + ".tmp")
            }
            #expect(error?.call == "rename")
            #expect(error?.path == path)
            #expect(try Self.names(in: directory) == ["busy"])
        }
    }

    @Test func makeDirectoryMakesOneAndAcceptsAnExistingOne() throws {
        try Self.withDirectory { directory in
            let path = directory + "/sub"
            try AtomicFile.makeDirectory(path)
            try AtomicFile.makeDirectory(path)
            var st = stat()
            #expect(stat(path, &st) == 0)
            #expect(st.st_mode & S_IFMT == S_IFDIR)
            #expect(st.st_mode & 0o777 == 0o700)
            let missing = #expect(throws: SystemCallError.self) { try AtomicFile.makeDirectory(directory + "/no/such") }
            #expect(missing?.errno == ENOENT)
        }
    }

    @Test func syncDirectoryOfAMissingDirectoryNamesTheCall() {
        let error = #expect(throws: SystemCallError.self) { try Syscall.syncDirectory("/nonexistent-\(UUID().uuidString)") }
        #expect(error?.call == "open directory")
        #expect(error?.errno == ENOENT)
    }

    @Test(arguments: [("/a/b", "/a"), ("/a", "/"), ("a", "."), ("a/b/c", "a/b")])
    func directoryOfAPath(path: String, directory: String) {
        #expect(AtomicFile.directory(of: path) == directory)
    }
}

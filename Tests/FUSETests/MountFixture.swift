/// Test helpers: a temporary mountpoint per test, skip-or-fail when FUSE is unusable, a watchdog,
/// and errno-returning wrappers around system calls.

import FUSE
import Foundation
import Glibc
import Testing

/// True when the environment demands the FUSE tests run (CI with /dev/fuse).
let fuseRequired = ProcessInfo.processInfo.environment["NOTESFS_REQUIRE_FUSE"] == "1"

/// Creates a fresh directory with `mkdtemp`.
func makeTemporaryDirectory(_ prefix: String = "fusetest") -> String {
    var template = Array((NSTemporaryDirectory() + "/\(prefix).XXXXXX").utf8CString)
    let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    precondition(result != nil, "mkdtemp failed")
    return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Mounts `fileSystem` at a new temporary directory and runs `body` with the mount and its path.
/// Skips (returns, with a note) when FUSE is unusable, unless `NOTESFS_REQUIRE_FUSE=1`. A watchdog
/// aborts the connection after `timeout` seconds so that a hung handler fails the test.
func withMount(
    _ fileSystem: MemoryFileSystem = MemoryFileSystem(), options: [String] = [], timeout: Double = 20,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (InProcessMount, String) throws -> Void
) throws {
    let directory = makeTemporaryDirectory()
    defer { rmdir(directory) }
    let mount: InProcessMount
    do {
        guard InProcessMount.isFUSEDeviceUsable else { throw FUSEUnusable() }
        mount = try InProcessMount(fileSystem: fileSystem, at: directory, options: options)
    } catch {
        if fuseRequired {
            Issue.record("FUSE is required (NOTESFS_REQUIRE_FUSE=1) but mounting failed: \(error)", sourceLocation: sourceLocation)
        } else {
            print("note: skipping a FUSE mount test (set NOTESFS_REQUIRE_FUSE=1 to fail instead): \(error)")
        }
        return
    }
    let watchdog = mount.watchdog(seconds: timeout)
    defer {
        #expect(watchdog.cancel(), "watchdog fired: a request hung", sourceLocation: sourceLocation)
        do { try mount.unmount() } catch { Issue.record("unmount failed: \(error)", sourceLocation: sourceLocation) }
    }
    try body(mount, mount.mountpoint)
}

struct FUSEUnusable: Error, CustomStringConvertible {
    var description: String { "/dev/fuse cannot be opened for reading and writing" }
}

/// Runs a C call that returns -1 and sets errno on failure; returns 0 on success or the errno.
func errnoOf(_ call: () -> Int32) -> Int32 {
    call() == -1 ? errno : 0
}

/// Writes `text` to a new file at `path` with open/pwrite/close; returns the errno or 0.
@discardableResult
func writeFile(_ path: String, _ text: String, mode: mode_t = 0o644) -> Int32 {
    let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode)
    if fd < 0 { return errno }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    let written = pwrite(fd, bytes, bytes.count, 0)
    return written == bytes.count ? 0 : errno
}

/// Reads a whole file with open/pread/close; nil on error.
func readFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY)
    if fd < 0 { return nil }
    defer { close(fd) }
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = pread(fd, &buffer, buffer.count, off_t(result.count))
        if count < 0 { return nil }
        if count == 0 { break }
        result += buffer[..<count]
    }
    return String(decoding: result, as: UTF8.self)
}

/// `stat(2)`; nil with the errno on failure.
func statOf(_ path: String) -> (stat?, Int32) {
    var st = stat()
    return stat(path, &st) == 0 ? (st, 0) : (nil, errno)
}

/// Test helpers: a temporary mountpoint per test, a watchdog,
/// and errno-returning wrappers around system calls.

import FUSE
import Foundation
import Glibc
import TestSupport
import Testing

/// Mounts `fileSystem` at a new temporary directory and runs `body` with the mount and its path.
/// A mount that fails is a recorded issue: a mount test carries `.needsFUSE`, which skips it where
/// FUSE is unusable. A watchdog
/// aborts the connection after `timeout` seconds so that a hung handler fails the test.
func withMount(
    _ fileSystem: MemoryFileSystem = MemoryFileSystem(), options: [String] = [], timeout: Double = 20,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (InProcessMount, String) throws -> Void
) throws {
    let directory = makeTemporaryDirectory("fusetest")
    defer { rmdir(directory) }
    let mount: InProcessMount
    do {
        mount = try InProcessMount(fileSystem: fileSystem, at: directory, options: options)
    } catch {
        Issue.record("mounting failed: \(error)", sourceLocation: sourceLocation)
        return
    }
    let watchdog = mount.watchdog(seconds: timeout)
    defer {
        #expect(watchdog.cancel(), "watchdog fired: a request hung", sourceLocation: sourceLocation)
        do { try mount.unmount() } catch { Issue.record("unmount failed: \(error)", sourceLocation: sourceLocation) }
    }
    try body(mount, mount.mountpoint)
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

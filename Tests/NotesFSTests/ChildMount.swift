/// The built `notesfs` binary run as a child process: `notesfs DB MNT -f [options]`, with a watchdog
/// that SIGKILLs the daemon and detaches the mount when a step overruns.

import FUSE
import Foundation
import Glibc
import RecordStore
import Testing

/// The `notesfs` executable next to the test bundle (or in one of its parent directories).
let notesfsBinary: String? = {
    var candidates: [URL] = []
    for start in [CommandLine.arguments.first, Bundle.main.executablePath].compactMap({ $0 }) {
        var directory = URL(fileURLWithPath: start).deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(directory.appendingPathComponent("notesfs"))
            directory = directory.deletingLastPathComponent()
        }
    }
    return candidates.map(\.path).first { path in
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
            && FileManager.default.isExecutableFile(atPath: path)
    }
}()

/// True when the mountpoint is on another device than its parent directory (mounted), or is a
/// dead FUSE mount (`ENOTCONN`).
func isMounted(_ mountpoint: String) -> Bool {
    var mine = stat(), parent = stat()
    guard stat(mountpoint, &mine) == 0 else { return errno == ENOTCONN }
    guard stat(mountpoint + "/..", &parent) == 0 else { return false }
    return mine.st_dev != parent.st_dev
}

/// Detaches whatever is mounted at `mountpoint` (cleanup after a killed daemon or a failure).
func detachMount(_ mountpoint: String) {
    _ = try? run(["/usr/bin/fusermount3", "-uz", mountpoint], timeout: 10)
    _ = try? run(["/bin/umount", "-l", mountpoint], timeout: 10)
}

/// Whether process `pid` still exists (not reaped and not a zombie).
func processExists(_ pid: pid_t) -> Bool {
    guard kill(pid, 0) == 0 else { return false }
    let status = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    // Field 3 (after "pid (comm)") is the state; Z is a zombie.
    if let close = status.lastIndex(of: ")") {
        return !status[status.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }
    return true
}

enum ChildMountError: Error, CustomStringConvertible {
    case noBinary
    case didNotMount(String)
    var description: String {
        switch self {
        case .noBinary: "the notesfs binary was not found next to the test bundle"
        case .didNotMount(let why): "notesfs did not mount: \(why)"
        }
    }
}

/// `notesfs DB MNT -f` as a child process.
final class ChildMount {
    let process: SpawnedProcess
    let mountpoint: String
    let databasePath: String
    let pid: pid_t
    let stderrPath: String
    private let watchdog: Watchdog

    /// Starts the daemon and waits (up to 10 s) until the mountpoint is mounted.
    /// - Parameter timeout: the watchdog: past it the daemon is killed and the mount detached.
    init(databasePath: String, mountpoint: String, arguments: [String] = [], timeout: Double = 60) throws {
        guard let binary = notesfsBinary else { throw ChildMountError.noBinary }
        self.mountpoint = mountpoint
        self.databasePath = databasePath
        stderrPath = mountpoint + ".stderr"
        let process = try SpawnedProcess(
            [binary, databasePath, mountpoint, "-f"] + arguments, stdout: "/dev/null", stderr: stderrPath)
        self.process = process
        let pid = process.pid
        self.pid = pid
        watchdog = Watchdog(seconds: timeout) {
            print("watchdog: notesfs (pid \(pid)) at \(mountpoint) overran \(timeout) s; killing it")
            kill(pid, SIGKILL)
            detachMount(mountpoint)
        }
        let mounted = poll(seconds: 10) { isMounted(mountpoint) || !process.isRunning }
        guard mounted, process.isRunning else {
            if process.isRunning { kill(pid, SIGKILL) }
            watchdog.cancel()
            detachMount(mountpoint)
            throw ChildMountError.didNotMount(stderr)
        }
    }

    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// Waits up to `seconds` for the daemon to exit; its status, or nil if it is still running.
    func waitForExit(seconds: Double = 10) -> Int32? {
        process.wait(seconds: seconds)
    }

    /// `fusermount3 -u`, then waits for the daemon to exit; its exit status (nil if it did not).
    @discardableResult
    func unmount() -> Int32? {
        _ = try? run(["/usr/bin/fusermount3", "-u", mountpoint], timeout: 10)
        return waitForExit()
    }

    /// Kills the daemon if still running, detaches the mount, removes the stderr file; disarms the watchdog.
    /// - Returns: false if the watchdog had fired.
    @discardableResult
    func cleanUp() -> Bool {
        if process.isRunning {
            kill(pid, SIGKILL)
            _ = waitForExit(seconds: 5)
        }
        if isMounted(mountpoint) || Mountpoint.isMountpoint(mountpoint) { detachMount(mountpoint) }
        try? FileManager.default.removeItem(atPath: stderrPath)
        return watchdog.cancel()
    }
}

/// Runs `body` with a `notesfs DB MNT -f` child over a fresh database directory (created with
/// `seed` first) and a fresh mountpoint. Skips (returns, with a note) when FUSE or the binary is
/// unusable, unless `NOTESFS_REQUIRE_FUSE=1`.
func withChildMount(
    arguments: [String] = [], timeout: Double = 60, sourceLocation: SourceLocation = #_sourceLocation,
    seed: (RecordDatabase) throws -> Void = { _ in },
    _ body: (ChildMount) throws -> Void
) throws {
    try withDatabaseDirectory { databasePath in
        let database = try RecordDatabase(path: databasePath, create: true)
        try seed(database)
        try database.close()
        let mountpoint = makeTemporaryDirectory("notesfschild")
        defer { rmdir(mountpoint) }
        let child: ChildMount
        do {
            guard InProcessMount.isFUSEDeviceUsable else { throw FUSEUnusable() }
            child = try ChildMount(databasePath: databasePath, mountpoint: mountpoint, arguments: arguments, timeout: timeout)
        } catch {
            if fuseRequired {
                Issue.record("FUSE is required (NOTESFS_REQUIRE_FUSE=1) but notesfs did not mount: \(error)", sourceLocation: sourceLocation)
            } else {
                print("note: skipping a notesfs child-process test (set NOTESFS_REQUIRE_FUSE=1 to fail instead): \(error)")
            }
            return
        }
        defer { #expect(child.cleanUp(), "watchdog fired: the daemon overran", sourceLocation: sourceLocation) }
        try body(child)
    }
}

/// The peak resident set size (`VmHWM` in `/proc/PID/status`) of process `pid`, in bytes; nil if unreadable.
func peakRSS(of pid: pid_t) -> Int64? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 2, let kilobytes = Int64(fields[1]) else { return nil }
        return kilobytes * 1024
    }
    return nil
}

extension ChildMount {
    /// The daemon's peak RSS so far, in bytes (0 if unreadable).
    var peakResidentBytes: Int64 { peakRSS(of: pid) ?? 0 }

    /// Unmounts cleanly (or, with `kill`, SIGKILLs the daemon and detaches the mount), then mounts
    /// the same database at the same mountpoint in a new daemon and runs `body` with it.
    func remount(killing kill: Bool = false, timeout: Double = 60, _ body: (ChildMount) throws -> Void) throws {
        if kill {
            _ = Glibc.kill(pid, SIGKILL)
            _ = waitForExit()
            detachMount(mountpoint)
        } else {
            let status = unmount()
            #expect(status == 0, "notesfs at unmount: \(status.map(String.init) ?? "still running"); stderr: \(stderr)")
        }
        let again = try ChildMount(databasePath: databasePath, mountpoint: mountpoint, timeout: timeout)
        defer { #expect(again.cleanUp(), "watchdog fired: the remounted daemon overran") }
        try body(again)
    }
}

/// Up to `count` bytes of the file at `path` from `offset` (pread); nil on error.
func readRange(_ path: String, offset: Int64, count: Int) -> [UInt8]? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0xAA, count: count)
    var done = 0
    while done < count {
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
        if n < 0 { return nil }
        if n == 0 { break }
        done += n
    }
    return Array(bytes[..<done])
}

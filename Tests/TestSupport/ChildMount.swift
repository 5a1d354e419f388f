/// The built `notesfs` binary as a mount daemon: `notesfs DB MNT -f [options]` as a child process
/// with its log (stderr) kept in a file, and a watchdog that SIGKILLs the daemon and detaches the
/// mount when a test overruns.

import FUSE
import Foundation
import RecordStore
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// True when `mountpoint` is on another device than its parent directory (mounted), or is a dead
/// FUSE mount (`ENOTCONN`).
public func isMounted(_ mountpoint: String) -> Bool {
    var mine = stat()
    var parent = stat()
    guard stat(mountpoint, &mine) == 0 else { return errno == ENOTCONN }
    guard stat(mountpoint + "/..", &parent) == 0 else { return false }
    return mine.st_dev != parent.st_dev
}

/// Detaches whatever is mounted at `mountpoint` (cleanup after a killed daemon or a failure).
public func detachMount(_ mountpoint: String) {
    _ = try? run(["/usr/bin/fusermount3", "-uz", mountpoint], timeout: 10)
    _ = try? run(["/bin/umount", "-l", mountpoint], timeout: 10)
}

/// Whether process `pid` still exists (not reaped and not a zombie).
public func processExists(_ pid: pid_t) -> Bool {
    guard kill(pid, 0) == 0 else { return false }
    let status = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    // Field 3 (after "pid (comm)") is the state; Z is a zombie.
    if let close = status.lastIndex(of: ")") {
        return !status[status.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }
    return true
}

/// The peak resident set size (`VmHWM` in `/proc/PID/status`) of process `pid`, in bytes; nil if unreadable.
public func peakRSS(of pid: pid_t) -> Int64? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 2, let kilobytes = Int64(fields[1]) else { return nil }
        return kilobytes * 1024
    }
    return nil
}

public struct ChildMountError: Error, CustomStringConvertible {
    public var description: String
}

/// `notesfs DB MNT -f [arguments]` as a child process.
public final class ChildMount {
    public let process: SpawnedProcess
    /// The mountpoint.
    public let path: String
    public let databasePath: String
    public let pid: pid_t
    /// Where the daemon's stderr (its log in the foreground) goes.
    public let logPath: String
    private let watchdog: Watchdog
    /// The mountpoint was made for this mount (removed by ``cleanUp()``).
    private let ownsMountpoint: Bool

    /// Starts the daemon and waits (up to 15 s, a bound for a loaded machine) until the mountpoint
    /// is mounted.
    /// - Parameters:
    ///   - mountpoint: where to mount; a fresh directory when nil.
    ///   - environment: added to the daemon's environment.
    ///   - timeout: the watchdog: past it the daemon is killed and the mount detached.
    /// - Throws: ``ChildMountError`` with the daemon's log when it did not mount.
    public init(
        databasePath: String, mountpoint: String? = nil, arguments: [String] = [], environment: [String: String] = [:],
        timeout: Double = 60
    ) throws {
        ownsMountpoint = mountpoint == nil
        let mountpoint = mountpoint ?? makeTemporaryDirectory("notesfschild")
        self.path = mountpoint
        self.databasePath = databasePath
        logPath = mountpoint + ".stderr"
        let process = try SpawnedProcess(
            [notesfsBinary, databasePath, mountpoint, "-f"] + arguments, environment: environment, stdout: "/dev/null", stderr: logPath)
        self.process = process
        let pid = process.pid
        self.pid = pid
        watchdog = Watchdog(seconds: timeout) {
            print("watchdog: notesfs (pid \(pid)) at \(mountpoint) overran \(timeout) s; killing it")
            kill(pid, SIGKILL)
            detachMount(mountpoint)
        }
        let mounted = eventually(15) { isMounted(mountpoint) || !process.isRunning }
        guard mounted, process.isRunning else {
            if process.isRunning { kill(pid, SIGKILL) }
            watchdog.cancel()
            detachMount(mountpoint)
            throw ChildMountError(description: "notesfs did not mount at \(mountpoint): \(log)")
        }
    }

    /// What the daemon logged so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The last part of the daemon's log, for a failure message.
    public var logTail: String { String(log.suffix(1500)) }

    /// Waits up to `seconds` for the daemon to exit; its status, or nil if it is still running.
    public func waitForExit(seconds: Double = 10) -> Int32? {
        process.wait(seconds: seconds)
    }

    /// `fusermount3 -u`, then waits for the daemon to exit; its exit status (nil if it did not).
    @discardableResult
    public func unmount() -> Int32? {
        _ = try? TestSupport.run(["/usr/bin/fusermount3", "-u", path], timeout: 10)
        return waitForExit()
    }

    /// Unmounts cleanly (lazily when the mount is busy), waits for the daemon, then
    /// ``cleanUp()``: what a test does when it is done with a mount.
    /// - Returns: false if the watchdog had fired.
    @discardableResult
    public func close() -> Bool {
        if process.isRunning {
            if (try? TestSupport.run(["/usr/bin/fusermount3", "-u", path], timeout: 10))?.status != 0 {
                _ = try? TestSupport.run(["/usr/bin/fusermount3", "-uz", path], timeout: 10)
            }
            _ = waitForExit()
        }
        return cleanUp()
    }

    /// Kills the daemon if still running, detaches the mount, removes the log file (and the
    /// mountpoint it made); disarms the watchdog.
    /// - Returns: false if the watchdog had fired.
    @discardableResult
    public func cleanUp() -> Bool {
        if process.isRunning {
            kill(pid, SIGKILL)
            _ = waitForExit(seconds: 5)
        }
        if isMounted(path) || Mountpoint.isMountpoint(path) { detachMount(path) }
        try? FileManager.default.removeItem(atPath: logPath)
        if ownsMountpoint { rmdir(path) }
        return watchdog.cancel()
    }

    deinit { if process.isRunning { close() } }

    /// The daemon's peak RSS so far, in bytes (0 if unreadable).
    public var peakResidentBytes: Int64 { peakRSS(of: pid) ?? 0 }

    /// Unmounts cleanly (or, with `kill`, SIGKILLs the daemon and detaches the mount), then mounts
    /// the same database at the same mountpoint in a new daemon and runs `body` with it.
    public func remount(killing kill: Bool = false, timeout: Double = 60, _ body: (ChildMount) throws -> Void) throws {
        if kill {
            _ = Glibc.kill(pid, SIGKILL)
            _ = waitForExit()
            detachMount(path)
        } else {
            let status = unmount()
            #expect(status == 0, "notesfs at unmount: \(status.map(String.init) ?? "still running"); log: \(log)")
        }
        let again = try ChildMount(databasePath: databasePath, mountpoint: path, timeout: timeout)
        defer { #expect(again.cleanUp(), "watchdog fired: the remounted daemon overran") }
        try body(again)
    }
}

/// Runs `body` with a new, empty database directory path (the database is created on first open),
/// removed afterwards.
public func withDatabaseDirectory<T>(_ body: (String) throws -> T) rethrows -> T {
    let directory = makeTemporaryDirectory("notesfsdb")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try body(directory + "/db")
}

/// Runs `body` with a `notesfs DB MNT -f` child over a fresh database directory (created with
/// `seed` first) and a fresh mountpoint; the test fails when it does not mount.
public func withChildMount(
    arguments: [String] = [], timeout: Double = 60, sourceLocation: SourceLocation = #_sourceLocation,
    seed: (RecordDatabase) throws -> Void = { _ in },
    _ body: (ChildMount) throws -> Void
) throws {
    try withDatabaseDirectory { databasePath in
        let database = try RecordDatabase(path: databasePath, create: true)
        try seed(database)
        try database.close()
        let child = try ChildMount(databasePath: databasePath, arguments: arguments, timeout: timeout)
        defer { #expect(child.cleanUp(), "watchdog fired: the daemon overran", sourceLocation: sourceLocation) }
        try body(child)
    }
}

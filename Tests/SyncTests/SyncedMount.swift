import Foundation
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// `notesfs DB MNT -f [options]` as a child process, for tests of the background sync; its
/// stderr (the daemon's log in the foreground) is kept in a file.
final class SyncedMount {
    let process: Process
    let path: String
    let logPath: String
    /// The database directory it mounts.
    let database: String

    /// Mounts and waits until the mountpoint is on another device; nil when FUSE is unusable
    /// (a recorded issue under `NOTESFS_REQUIRE_FUSE=1`, a note otherwise).
    init?(database: String, options: [String] = [], environment: [String: String] = [:]) throws {
        var template = Array("/tmp/notesfs-syncmnt-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        logPath = path + ".log"
        self.database = database
        process = Process()
        guard access("/dev/fuse", R_OK | W_OK) == 0 else {
            if ProcessInfo.processInfo.environment["NOTESFS_REQUIRE_FUSE"] == "1" {
                Issue.record("NOTESFS_REQUIRE_FUSE=1 but /dev/fuse is not usable")
            } else {
                print("note: skipping a mount test: /dev/fuse is not usable")
            }
            return nil
        }
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: notesfsBinary)
        process.arguments = [database, path, "-f"] + options
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try process.run()
        if eventually(15, { self.isMounted || !self.process.isRunning }), isMounted { return }
        Issue.record("the mount at \(path) did not appear: \(log)")
        if process.isRunning { process.terminate() }
        return nil
    }

    var isMounted: Bool {
        var mine = stat()
        var parent = stat()
        return stat(path, &mine) == 0 && stat(path + "/..", &parent) == 0 && mine.st_dev != parent.st_dev
    }

    /// What the daemon logged so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The text of the file at `name` in the mount, nil when it cannot be read.
    func read(_ name: String) -> String? { try? String(contentsOfFile: path + "/" + name, encoding: .utf8) }

    func write(_ name: String, _ text: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + name)) }

    func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path + "/" + name) }

    /// Whether `name` has a directory entry in the mount, whatever its type (`lstat`: a dangling
    /// symlink exists too).
    func hasEntry(_ name: String) -> Bool {
        var st = stat()
        return lstat(path + "/" + name, &st) == 0
    }

    /// The bytes of the file at `name`, nil when it cannot be read.
    func bytes(_ name: String) -> Data? { FileManager.default.contents(atPath: path + "/" + name) }

    /// The value of extended attribute `key` of `name` (`getfattr`: Glibc's module lacks
    /// `<sys/xattr.h>`), nil when it has none.
    func xattr(_ name: String, _ key: String) -> String? {
        guard let result = try? runProgram("/usr/bin/getfattr", ["-h", "--absolute-names", "-n", key, "--only-values", path + "/" + name]),
            result.status == 0
        else { return nil }
        return result.out
    }

    /// The record name of the entry at `name` (`user.notesfs.recordName`).
    func recordName(_ name: String) -> String? { xattr(name, "user.notesfs.recordName") }

    /// Runs `command` with `/bin/sh -c` in the mount's root (HOME=/tmp and TERM=dumb for editors,
    /// TZ=UTC for the times `stat` and `touch` show and read);
    /// its exit status and output (stdout and stderr).
    @discardableResult
    func shell(_ command: String) throws -> (status: Int32, out: String) {
        try runProgram("/bin/sh", ["-c", "cd \(shellQuoted(path)) && HOME=/tmp TERM=dumb TZ=UTC; export HOME TERM TZ; \(command)"])
    }

    /// Runs `command` as ``shell(_:)`` does; records an issue with its output when it fails.
    func run(_ command: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try shell(command)
        #expect(result.status == 0, "\(command): \(result.out)", sourceLocation: sourceLocation)
    }

    /// The last part of the daemon's log, for a failure message.
    var logTail: String { String(log.suffix(1500)) }

    /// Unmounts (`fusermount3 -u`, lazily when busy) and waits for the daemon; removes the mountpoint.
    func unmount() {
        if (try? runProgram("/bin/fusermount3", ["-u", path]))?.status != 0 { _ = try? runProgram("/bin/fusermount3", ["-uz", path]) }
        if !eventually(10, { !self.process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        rmdir(path)
        try? FileManager.default.removeItem(atPath: logPath)
    }

    deinit { if process.isRunning { unmount() } }
}

/// `text` quoted for `/bin/sh`.
func shellQuoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }

/// Live mounts of `count` machines on one new server database (on `testCluster`, else the
/// shared one), each mount syncing in the background; `body` gets them with their machines, and
/// they are unmounted after it. Nothing runs when FUSE is unusable (see ``SyncedMount``).
func withSyncedMounts(
    _ count: Int, on testCluster: TestCluster? = nil, _ body: (_ mounts: [SyncedMount], _ machines: [Machine]) throws -> Void
) throws {
    let (_, machines) = try makeMachines(count, on: testCluster)
    var mounts: [SyncedMount] = []
    defer { for mount in mounts { mount.unmount() } }
    for machine in machines {
        guard let mount = try SyncedMount(database: machine.path) else { return }
        mounts.append(mount)
    }
    try body(mounts, machines)
}

/// Polls `condition` in each of `mounts` until it holds (up to `seconds` in all, a generous bound
/// for a loaded machine, never a measured time); records an issue naming each mount where it does
/// not, with the end of that daemon's log. Returns whether it held everywhere.
@discardableResult
func expectEverywhere(
    _ mounts: [SyncedMount], _ what: String, within seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: (SyncedMount) -> Bool
) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    var held = true
    for mount in mounts where !eventually(max(0.1, deadline.timeIntervalSinceNow), { condition(mount) }) {
        Issue.record(
            "\(what): not seen in \(mount.path) within \(seconds) s; its log ends:\n\(mount.logTail)", sourceLocation: sourceLocation)
        held = false
    }
    return held
}

/// Polls `condition` every 50 ms for up to `seconds`: a generous bound for a loaded machine,
/// never a measured time.
func eventually(_ seconds: Double = 30, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(50_000)
    }
    return condition()
}

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

    /// Mounts and waits until the mountpoint is on another device; nil when FUSE is unusable
    /// (a recorded issue under `NOTESFS_REQUIRE_FUSE=1`, a note otherwise).
    init?(database: String, options: [String] = [], environment: [String: String] = [:]) throws {
        var template = Array("/tmp/notesfs-syncmnt-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        logPath = path + ".log"
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
        var mine = stat(), parent = stat()
        return stat(path, &mine) == 0 && stat(path + "/..", &parent) == 0 && mine.st_dev != parent.st_dev
    }

    /// What the daemon logged so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The text of the file at `name` in the mount, nil when it cannot be read.
    func read(_ name: String) -> String? { try? String(contentsOfFile: path + "/" + name, encoding: .utf8) }

    func write(_ name: String, _ text: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + name)) }

    func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path + "/" + name) }

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

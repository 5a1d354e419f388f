/// Running programs from a test: one runner (`posix_spawn`, output through files, a watchdog)
/// for real tools (`sh`, `diff`, `vim`) and for the built `notesfs` binary.

import FUSE
import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// What one run of a program did.
public struct ProgramResult: CustomStringConvertible, Sendable {
    public var status: Int32
    /// Its standard output as written (`note cat` of a binary note is not text).
    public var stdout: Data
    /// Its standard error (with `mergingErrors`, empty: the errors are in ``stdout``).
    public var stderr: String

    /// Standard output as text.
    public var out: String { String(decoding: stdout, as: UTF8.self) }
    /// Standard output's lines, without the newline of the last.
    public var lines: [String] { out.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
    public init(status: Int32, stdout: Data, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }

    public var description: String { "exit \(status), stdout: \(out.debugDescription), stderr: \(stderr.debugDescription)" }
}

/// Runs `arguments` (`arguments[0]` a path) to its end and returns what it did.
///
/// - Parameters:
///   - directory: the working directory (the test's own otherwise).
///   - stdin: its standard input (`/dev/null` when nil).
///   - environment: added to this process's environment.
///   - timeout: past it the program is killed (`SIGKILL`) and the result says so.
///   - mergingErrors: standard error goes where standard output goes, in order.
/// - Throws: ``SpawnError`` when it cannot start.
@discardableResult
public func run(
    _ arguments: [String], in directory: String? = nil, stdin: Data? = nil, environment: [String: String] = [:],
    timeout: Double = 600, mergingErrors: Bool = false
) throws -> ProgramResult {
    let scratch = makeTemporaryDirectory("notesfsrun")
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    var input = "/dev/null"
    if let stdin {
        input = scratch + "/in"
        _ = FileManager.default.createFile(atPath: input, contents: stdin)
    }
    let command = directory.map { ["/bin/sh", "-c", "cd \(shellQuoted($0)) && exec \"$@\"", "sh"] + arguments } ?? arguments
    let child = try SpawnedProcess(
        command, environment: environment, stdin: input, stdout: scratch + "/out", stderr: mergingErrors ? nil : scratch + "/err")
    let pid = child.pid
    let watchdog = Watchdog(seconds: timeout) { kill(pid, SIGKILL) }
    let status = child.wait()
    let timedOut = !watchdog.cancel()
    var result = ProgramResult(
        status: status, stdout: FileManager.default.contents(atPath: scratch + "/out") ?? Data(),
        stderr: (try? String(contentsOfFile: scratch + "/err", encoding: .utf8)) ?? "")
    if timedOut { result.stderr += "\n[killed after \(timeout) s]" }
    return result
}

/// ``run(_:in:stdin:environment:timeout:mergingErrors:)`` of `executable` with `arguments`.
@discardableResult
public func run(
    _ executable: String, _ arguments: [String], in directory: String? = nil, stdin: Data? = nil,
    environment: [String: String] = [:], timeout: Double = 600, mergingErrors: Bool = false
) throws -> ProgramResult {
    try run([executable] + arguments, in: directory, stdin: stdin, environment: environment, timeout: timeout, mergingErrors: mergingErrors)
}

/// Runs `command` with `/bin/sh -c` (in `directory` if given) to its end.
@discardableResult
public func sh(
    _ command: String, in directory: String? = nil, environment: [String: String] = [:], timeout: Double = 600,
    mergingErrors: Bool = false
) throws -> ProgramResult {
    try run(["/bin/sh", "-c", command], in: directory, environment: environment, timeout: timeout, mergingErrors: mergingErrors)
}

public struct SpawnError: Error, CustomStringConvertible {
    public var command: [String]
    public var code: Int32
    public var description: String { "posix_spawn \(command): \(String(cString: strerror(code)))" }
}

/// A child started with `posix_spawn` and reaped with `waitpid` on its own pid. (Foundation's
/// `Process` waits until every descendant closed an inherited descriptor, so a daemon that forks
/// away, as `notesfs` without `-f` does, would keep `waitUntilExit` from returning.)
public final class SpawnedProcess {
    public let pid: pid_t
    private var status: Int32?

    /// Starts `arguments[0]` (a path) with stdin from `stdin` and stdout/stderr to the given files
    /// (stderr to stdout's file when nil).
    public init(_ arguments: [String], environment: [String: String] = [:], stdin: String = "/dev/null", stdout: String, stderr: String?)
        throws
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
        if let stderr {
            posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // Nothing else of the test process: a long-lived child (a notesfs daemon) that inherited a
        // descriptor another test holds on a mounted file would keep that mount busy (EBUSY at
        // unmount) for the child's whole life. Every descriptor above stderr is closed in the
        // child, as it starts (glibc 2.34's `posix_spawn_file_actions_addclosefrom_np`): a list
        // of this process's descriptors made before the spawn misses those another thread opens
        // meanwhile (`SpawnedProcessTests`).
        if Self.closeFrom().map({ $0(&actions, 3) }) != 0 {
            // (glibc ignores a close action on a descriptor closed meanwhile: only out-of-range ones fail.)
            let inherited = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.compactMap { Int32($0) } ?? []
            for fd in inherited where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
        guard code == 0 else { throw SpawnError(command: arguments, code: code) }
        self.pid = pid
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not declare: looked up by name; nil where the C library has none.
    private static func closeFrom() -> (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }

    /// The exit status (128 + signal when killed), reaping the child; nil while it runs.
    public func exitStatus() -> Int32? {
        if let status { return status }
        var raw: Int32 = 0
        let result = waitpid(pid, &raw, WNOHANG)
        guard result == pid else { return result < 0 ? -1 : nil }
        let signal = raw & 0x7F
        status = signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
        return status
    }

    public var isRunning: Bool { exitStatus() == nil }

    /// Waits for the exit (polling every 5 ms).
    public func wait() -> Int32 {
        while true {
            if let status = exitStatus() { return status }
            usleep(5_000)
        }
    }

    /// Waits up to `seconds`; the exit status, or nil if still running.
    public func wait(seconds: Double) -> Int32? {
        var result: Int32?
        _ = eventually(seconds) {
            result = exitStatus()
            return result != nil
        }
        return result
    }
}

/// Runs the shell `commands` in a detached shell once this process has exited (however it ends).
public func runAfterThisProcess(_ commands: String) {
    let script = "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done\n" + commands
    _ = try? SpawnedProcess(["/usr/bin/setsid", "/bin/sh", "-c", script], stdout: "/dev/null", stderr: "/dev/null")
}

/// `Session.serve`: the daemon's whole life: prepare, mount, daemonise, loop until unmount or
/// signal, clean up.

import CFuse
import Glibc
import POSIX

/// Why the filesystem could not start: a message for the user and the process exit status.
public struct StartupFailure: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var status: Int32

    public init(_ message: String, status: Int32) {
        self.message = message
        self.status = status
    }

    public var description: String { message }
}

extension Session {
    /// Mounts `fileSystem` at `mountpoint` and serves it until unmounted or signalled.
    ///
    /// Order: unless `-f`, a fork: the child starts a new session (`setsid`), runs `prepare` (e.g.
    /// opens the database, so that its threads live in the daemon; it returns mount options to
    /// add, such as `ro`), creates the FUSE session (`fuse_session_new` with
    /// `default_permissions`, `subtype=notesfs`, `fsname=`), installs the signal handlers
    /// (`fuse_set_signal_handlers`), mounts (`fuse_session_mount`), and only then reports success
    /// to the parent, moves to `/` and points stdin/stdout/stderr at `/dev/null` (logging goes to
    /// syslog; pass absolute paths). The parent waits for that report and exits with its status,
    /// printing the child's message on failure: a filesystem that cannot start fails in the
    /// foreground, with a non-zero status, and never leaves a mount behind (`prepare` runs before
    /// the mount). This is `fuse_daemonize`'s protocol, which reports only success. With `-f`,
    /// the same steps run in this process. Then `serving` (mounted, daemonised: start threads
    /// there, report readiness), then the loop, then the filesystem's `destroy` (make
    /// everything durable) before `fuse_session_unmount` and `fuse_session_destroy`.
    /// - Returns: the loop's result: 0 after an unmount, the signal number after SIGTERM/SIGINT/SIGHUP
    ///   (both clean exits), or a negative errno.
    /// - Throws: ``StartupFailure`` when `prepare` fails, `FUSEError` when the session cannot be
    ///   set up or mounted (foreground only: a daemonising parent exits with the child's status).
    public static func serve(
        fileSystem: any FileSystem, mountpoint: String, options: CommandLineOptions, fsname: String?,
        subtype: String = "notesfs", prepare: () throws(StartupFailure) -> [String] = { [] },
        serving: () -> Void = {}
    ) throws -> Int32 {
        if options.debug { Log.setMinimumLevel(.debug) }
        func start(_ mountOptions: [String]) throws(FUSEError) -> Session {
            var arguments = options.sessionArguments(fsname: fsname, subtype: subtype)
            if !mountOptions.isEmpty { arguments += ["-o", mountOptions.joined(separator: ",")] }
            let session = try Session(fileSystem: fileSystem, arguments: arguments, maxRead: options.maxRead)
            try session.setSignalHandlers()
            do { try session.mount(at: mountpoint) } catch {
                session.removeSignalHandlers()
                throw error
            }
            return session
        }
        let session: Session
        if options.foreground {
            session = try start(try prepare())
            _ = chdir("/")
        } else {
            let report = try Daemon.fork()
            do {
                guard setsid() != -1 else { throw StartupFailure("\(subtype): setsid: \(Errno.current)", status: 5) }
                session = try start(try prepare())
            } catch {
                report.fail(error, subtype: subtype)
            }
            report.succeed()
            Log.useSyslog(identifier: subtype)
        }
        Log.info("serving \(fsname ?? subtype) at \(session.mountpoint ?? mountpoint)")
        serving()
        let status = session.loop(singleThread: options.singleThread, configuration: options.loop)
        Log.info("session ended (\(status > 0 ? "signal \(status)" : "status \(status)")); flushing")
        session.finishFileSystem()
        session.removeSignalHandlers()
        session.unmount()
        session.destroy()
        return status
    }
}

/// The fork of a daemon that reports its start-up to the waiting parent through a pipe.
struct Daemon {
    /// The write end of the pipe, in the child.
    private let pipe: Int32

    /// Forks. The parent waits for the child's report and exits with its status (printing its
    /// message); it never returns. The child returns a `Daemon` to report with.
    static func fork() throws(FUSEError) -> Daemon {
        var ends: [Int32] = [0, 0]
        guard Glibc.pipe(&ends) == 0 else { throw .daemonizeFailed }
        let pid = Glibc.fork()
        if pid < 0 { throw .daemonizeFailed }
        if pid > 0 {
            close(ends[1])
            waitForReport(ends[0])
        }
        close(ends[0])
        return Daemon(pipe: ends[1])
    }

    /// The parent: reads `status byte, message` until the child closes the pipe; exits with it.
    private static func waitForReport(_ fd: Int32) -> Never {
        let bytes = (try? Syscall.readToEnd(fd, limit: 65536, path: "daemon pipe")) ?? []
        guard let status = bytes.first else {
            let message = "the daemon exited while starting (see the system log)\n"
            _ = write(2, message, message.utf8.count)
            _exit(5)
        }
        if bytes.count > 1 { _ = bytes[1...].withUnsafeBytes { write(2, $0.baseAddress, $0.count) } }
        _exit(Int32(status))
    }

    /// The child: start-up failed; tells the parent and exits.
    func fail(_ error: any Error, subtype: String) -> Never {
        let failure = error as? StartupFailure ?? StartupFailure("\(subtype): \(error)", status: 5)
        let status = UInt8(clamping: failure.status == 0 ? 1 : failure.status)
        send([status] + Array((failure.message + "\n").utf8))
        _exit(Int32(status))
    }

    /// The child: serving; tells the parent, moves to `/` and detaches from the terminal.
    func succeed() {
        _ = chdir("/")
        let null = open("/dev/null", O_RDWR)
        if null >= 0 {
            for fd: Int32 in [0, 1, 2] { _ = dup2(null, fd) }
            if null > 2 { close(null) }
        }
        send([0])
    }

    private func send(_ bytes: [UInt8]) {
        try? Syscall.writeAll(pipe, bytes, path: "daemon pipe")
        close(pipe)
    }
}

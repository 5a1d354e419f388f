/// `InProcessMount`: mount a `FileSystem` inside this process (for tests) and stop it cleanly.

import CFuse
import Foundation
import Glibc
import Synchronization

/// A filesystem mounted at a directory with its loop on a background thread.
///
/// ```swift
/// let mount = try InProcessMount(fileSystem: MyFS(), at: directory)
/// defer { try? mount.unmount() }
/// // real system calls under mount.mountpoint
/// ```
/// `unmount()` unmounts (retrying while `EBUSY`, then detaching), waits for the loop to end, then
/// calls `fuse_session_unmount` and `fuse_session_destroy` (which calls the filesystem's `destroy`).
/// `abort()` (used by `watchdog(seconds:)`) aborts the FUSE connection so that calls blocked on a
/// hung handler fail with `ENOTCONN` instead of hanging.
public final class InProcessMount: Sendable {
    public let session: Session
    /// The resolved mountpoint.
    public let mountpoint: String
    private let loopDone = LoopCompletion()
    private let stopped = Mutex(false)

    /// Mounts `fileSystem` at `directory` and starts the loop on a new thread.
    /// - Parameters:
    ///   - options: extra `-o` mount options (e.g. `["ro"]`); `default_permissions`, `subtype`
    ///     and `fsname` are added. Needs root or a usable `fusermount3`.
    ///   - singleThread: use `fuse_session_loop` instead of the multi-threaded loop.
    /// - Throws: `FUSEError` when the session cannot be created or mounted.
    public init(
        fileSystem: any FileSystem, at directory: String, options: [String] = [], singleThread: Bool = false,
        fsname: String = "notesfs-test", subtype: String = "notesfs"
    ) throws(FUSEError) {
        var arguments = CommandLineOptions(programName: "notesfs-test", positionals: [], fuseArguments: ["notesfs-test"])
        if !options.isEmpty { arguments.fuseArguments += ["-o", options.joined(separator: ",")] }
        let maxRead = options.first { $0.hasPrefix("max_read=") }.flatMap { UInt32($0.dropFirst(9)) }
        let session = try Session(
            fileSystem: fileSystem, arguments: arguments.sessionArguments(fsname: fsname, subtype: subtype),
            maxRead: maxRead)
        try session.mount(at: directory)
        self.session = session
        self.mountpoint = session.mountpoint ?? directory
        let done = loopDone
        let thread = Thread {
            done.finish(session.loop(singleThread: singleThread))
        }
        thread.name = "fuse-loop \(mountpoint)"
        thread.start()
        // The kernel sends INIT at mount; wait for it so notifications work at once.
        if !session.bridge.waitUntilInitialized(seconds: 10) {
            Log.warning("\(mountpoint): no FUSE INIT within 10 s")
        }
    }

    /// Invalidation notifications for this mount.
    public var notifier: Notifier { session.notifier }

    /// True when `/dev/fuse` can be opened (a mount may still fail without privileges).
    public static var isFUSEDeviceUsable: Bool {
        let fd = Glibc.open("/dev/fuse", O_RDWR)
        if fd < 0 { return false }
        close(fd)
        return true
    }

    /// Unmounts and destroys the session; idempotent.
    /// - Parameter timeout: how long to wait for the loop to end after the unmount.
    /// - Returns: the loop's result (0 after an unmount).
    /// - Throws: `FUSEError.unmountFailed` if the mount cannot be removed, `.loopDidNotStop` if a
    ///   handler hangs (the session is then leaked, not destroyed under its threads).
    @discardableResult
    public func unmount(timeout: Double = 10) throws(FUSEError) -> Int32 {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return loopDone.result ?? 0 }
        try detach()
        guard loopDone.wait(seconds: timeout) else {
            session.leak()
            throw .loopDidNotStop(mountpoint)
        }
        session.unmount()
        session.destroy()
        return loopDone.result ?? 0
    }

    /// `umount2(mountpoint)`, retried while `EBUSY` (a file still being closed), then with
    /// `MNT_DETACH` so that the loop ends once the last open file is closed.
    private func detach() throws(FUSEError) {
        for attempt in 0..<5 {
            if umount2(mountpoint, 0) == 0 { return }
            let errno = Errno.current
            if errno == .invalidArgument { return }  // no longer mounted (e.g. aborted and detached)
            if errno != .busy { throw .unmountFailed(mountpoint, errno) }
            usleep(UInt32(20_000 * (attempt + 1)))
        }
        if umount2(mountpoint, notesfs_mnt_detach()) != 0 && Errno.current != .invalidArgument {
            throw .unmountFailed(mountpoint, Errno.current)
        }
    }

    /// Aborts the FUSE connection (`umount2(MNT_FORCE)` runs the kernel's `fuse_abort_conn`): every
    /// pending and later request fails with `ENOTCONN`, and the loop ends. Call `unmount()` after.
    public func abort() {
        _ = umount2(mountpoint, notesfs_mnt_force())
    }

    /// Starts a watchdog that aborts this mount if not cancelled within `seconds`.
    public func watchdog(seconds: Double) -> Watchdog {
        Watchdog(seconds: seconds) { [self] in
            Log.error("watchdog: \(mountpoint) did not finish within \(seconds) s; aborting the connection")
            abort()
        }
    }
}

/// The loop thread's result and a semaphore signalled when it ends.
final class LoopCompletion: Sendable {
    private let ended = DispatchSemaphore(value: 0)
    private let status = Mutex<Int32?>(nil)

    func finish(_ result: Int32) {
        status.withLock { $0 = result }
        ended.signal()
    }

    /// Waits for the loop to end; false on timeout.
    func wait(seconds: Double) -> Bool {
        guard ended.wait(timeout: .now() + seconds) == .success else { return false }
        ended.signal()  // later waiters return at once
        return true
    }

    var result: Int32? { status.withLock { $0 } }
}

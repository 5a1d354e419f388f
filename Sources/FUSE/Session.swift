/// `Session`: one libfuse low-level session: create, mount, run the loop, unmount, destroy.

import CFuse
import Glibc
import Synchronization

/// A FUSE session serving a `FileSystem` (`fuse_session_new` … `fuse_session_destroy`).
///
/// Typical daemon use is `Session.serve(...)`; tests use `InProcessMount`. The methods wrap the
/// libfuse calls of the same name and are meant to be called in order: `init`, `mount(at:)`,
/// `loop(...)`, `unmount()`, `destroy()` (also done by `deinit`).
public final class Session: Sendable {
    /// `struct fuse_session *` as bits: an `OpaquePointer` is not `Sendable`. Immutable; valid until
    /// `destroy()`, which `state` guards.
    private let bits: UInt
    let bridge: Bridge
    private let state = Mutex(State())

    struct State {
        var mountpoint: String?
        var destroyed = false
        /// Set when the loop did not stop: the session must not be destroyed under live threads.
        var leaked = false
    }

    /// Invalidation notifications for this session.
    public var notifier: Notifier { bridge.notifier }

    var pointer: OpaquePointer { OpaquePointer(bitPattern: bits)! }

    /// Creates a session (`fuse_session_new`) with libfuse arguments (argv[0] first, then e.g.
    /// `-o default_permissions,fsname=x`, `-d`).
    /// - Parameter maxRead: the `-o max_read=` value, if any (copied into the connection at init).
    /// - Throws: `FUSEError.sessionCreationFailed` when libfuse refuses the arguments.
    public init(fileSystem: any FileSystem, arguments: [String], maxRead: UInt32? = nil) throws(FUSEError) {
        let bridge = Bridge(fileSystem: fileSystem, notifier: Notifier(), maxRead: maxRead)
        let arguments = FuseArguments(arguments)
        var operations = Operations.table()
        // Retained for the session's life; released in destroy() after fuse_session_destroy.
        let userdata = Unmanaged.passRetained(bridge).toOpaque()
        guard
            let session = fuse_session_new(
                &arguments.arguments, &operations, MemoryLayout<fuse_lowlevel_ops>.size, userdata)
        else {
            Unmanaged<Bridge>.fromOpaque(userdata).release()
            throw .sessionCreationFailed(arguments.strings)
        }
        self.bits = UInt(bitPattern: session)
        self.bridge = bridge
    }

    deinit {
        unmount()
        destroy()
    }

    /// Validates `mountpoint` (see `Mountpoint.validate`) and mounts (`fuse_session_mount`).
    /// - Throws: `FUSEError` for an unusable mountpoint or a failed mount.
    public func mount(at mountpoint: String) throws(FUSEError) {
        let resolved = try Mountpoint.validate(mountpoint)
        guard fuse_session_mount(pointer, resolved) == 0 else { throw .mountFailed(resolved) }
        state.withLock { $0.mountpoint = resolved }
        bridge.notifier.attach(pointer)
    }

    /// The resolved mountpoint once mounted.
    public var mountpoint: String? { state.withLock { $0.mountpoint } }

    /// Serves requests until unmounted or signalled (`fuse_session_loop` / `fuse_session_loop_mt`).
    /// - Returns: 0 after unmount, a signal number (> 0) when a signal ended it (a clean exit), or
    ///   a negative errno.
    public func loop(singleThread: Bool = false, configuration: LoopConfiguration = LoopConfiguration()) -> Int32 {
        if singleThread { return fuse_session_loop(pointer) }
        if !configuration.cloneFD, let loop = SpinningLoop(session: pointer, configuration: configuration, fileSystem: bridge.fileSystem) {
            return loop.run()
        }
        let config = fuse_loop_cfg_create()
        defer { fuse_loop_cfg_destroy(config) }
        fuse_loop_cfg_set_clone_fd(config, configuration.cloneFD ? 1 : 0)
        if let maxThreads = configuration.maxThreads { fuse_loop_cfg_set_max_threads(config, maxThreads) }
        if let idle = configuration.maxIdleThreads { fuse_loop_cfg_set_idle_threads(config, idle) }
        return fuse_session_loop_mt(pointer, config)
    }

    /// Asks the loop to end (`fuse_session_exit`); blocked workers only notice on their next request.
    public func exit() { fuse_session_exit(pointer) }

    /// Lets the filesystem make everything durable now (its `destroy`, called only once even though
    /// libfuse calls it again in `destroy()`).
    public func finishFileSystem() { bridge.destroyOnce() }

    /// Unmounts (`fuse_session_unmount`) if mounted; does nothing for a leaked session.
    public func unmount() {
        let mounted = state.withLock { state in
            defer { state.mountpoint = nil }
            return state.mountpoint != nil && !state.destroyed && !state.leaked
        }
        if mounted { fuse_session_unmount(pointer) }
    }

    /// Destroys the session (`fuse_session_destroy`, which calls the filesystem's `destroy` if it
    /// has not run yet). Idempotent; does nothing for a leaked session.
    public func destroy() {
        let proceed = state.withLock { state in
            defer { state.destroyed = true }
            return !state.destroyed && !state.leaked
        }
        guard proceed else { return }
        bridge.notifier.detach()
        fuse_session_destroy(pointer)
        Unmanaged.passUnretained(bridge).release()
    }

    /// Marks the session as never to be destroyed (its loop thread is stuck in a handler).
    func leak() { state.withLock { $0.leaked = true } }

    /// Installs libfuse's SIGINT/SIGTERM/SIGHUP handlers that end the loop (`fuse_set_signal_handlers`)
    /// and unblocks those signals in the calling thread, the one that runs the loop: a process
    /// inherits its parent's signal mask, and a parent that started it from a thread blocking them
    /// (Dispatch's worker threads block every signal) would leave SIGTERM pending forever.
    public func setSignalHandlers() throws(FUSEError) {
        guard fuse_set_signal_handlers(pointer) == 0 else { throw .signalHandlersFailed }
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGHUP, SIGINT, SIGTERM] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }

    /// Restores the signal handlers (`fuse_remove_signal_handlers`).
    public func removeSignalHandlers() { fuse_remove_signal_handlers(pointer) }
}

/// Settings of the multi-threaded loop (`fuse_loop_cfg_*`).
public struct LoopConfiguration: Hashable, Sendable {
    public var cloneFD: Bool
    public var maxThreads: UInt32?
    public var maxIdleThreads: UInt32?

    public init(cloneFD: Bool = false, maxThreads: UInt32? = nil, maxIdleThreads: UInt32? = nil) {
        self.cloneFD = cloneFD
        self.maxThreads = maxThreads
        self.maxIdleThreads = maxIdleThreads
    }
}

/// `SpinningLoop`: the daemon's default request loop. One thread at a time, the leader, reads
/// requests and serves them itself; after each one it keeps reading for ``spinNanoseconds`` before
/// it sleeps, so that a program making one request after another finds it awake.
///
/// Why: with libfuse's multi-threaded loop every request wakes a worker blocked in `read(2)` on
/// `/dev/fuse`, and on this kind of VM that wake-up (the scheduler's switch with its interrupts) was
/// about half of the daemon's CPU per request (`finish_task_switch` alone 23-48% of the samples).
/// Reading without blocking for a few tens of microseconds after a reply catches the next request of
/// a program that makes them one after another (`cp`, `grep -r`, an editor's save), and the wake-up
/// is gone.
///
/// Concurrency is kept: a monitor (the thread that called ``run()``) looks at the leader every
/// ``monitorTickMicroseconds``; a leader busy with one request for longer than that hands the
/// reading to another worker (a parked one, or a new one up to `maxThreads`), so that a slow request
/// (a large save being hashed, a flush to a slow disk) never holds up the others for long, and
/// several busy clients get several workers. The old leader parks when it is done (or exits when
/// `maxIdleThreads` are parked already).
///
/// Ends as libfuse's loops do: on unmount (`ENODEV`), or when the session is told to exit (libfuse's
/// signal handlers; signals reach the monitor, whose sleep they interrupt; the workers block them).
/// Only public libfuse calls are used: `fuse_session_receive_buf` and `fuse_session_process_buf`,
/// each worker with its own buffer, as `fuse_session_loop_mt` does.

import CFuse
import Dispatch
import Foundation
import Glibc
import Synchronization

final class SpinningLoop: Sendable {
    /// How long the leader keeps reading after a request before it sleeps in `poll(2)`.
    static let spinNanoseconds = 50_000
    /// How often the monitor looks at a busy leader, and how long a request may hold the reading.
    static let monitorTickMicroseconds: UInt32 = 2_000
    /// After this long without requests the monitor sleeps until the next one (no idle wake-ups).
    static let monitorIdleNanoseconds = 50_000_000

    /// `struct fuse_session *` as bits (see ``Session``); valid while the loop runs.
    private let bits: UInt
    private let deviceFD: Int32
    /// The filesystem, for the requests libfuse does not know (``Tmpfile``).
    private let fileSystem: any FileSystem
    private let maxThreads: Int
    private let maxIdleThreads: Int
    /// Written by the monitor to wake a leader sleeping in `poll(2)` when the loop must end.
    private let stopPipe: (read: Int32, write: Int32)
    /// Written by a leader leaving a long sleep, to wake a monitor that went idle.
    private let monitorPipe: (read: Int32, write: Int32)
    /// Guards every field of ``LoopState`` (held briefly: twice per request by the leader). The
    /// pipes and `deviceFD` are set once; each worker's `fuse_buf` is its own.
    private let state = Mutex(LoopState())
    /// Entered by every worker thread; ``run()`` waits for all of them before it returns.
    private let workers = DispatchGroup()

    struct LoopState {
        /// The worker that reads requests now.
        var leader = 0
        var nextWorker = 1
        /// Live worker threads (the leader, busy ones, parked ones).
        var threads = 0
        /// Parked workers, each waiting on its semaphore to be made leader (or told to stop).
        var parked: [(id: Int, wake: DispatchSemaphore)] = []
        /// When the leader started the request it is serving (monotonic ns); nil while it reads.
        var busySince: Int?
        /// When the leader last had a request or woke up (monotonic ns).
        var lastActivity = 0
        /// Whether the leader sleeps in `poll(2)`.
        var leaderSleeps = false
        /// Whether the monitor sleeps until `monitorPipe` is written.
        var monitorSleeps = false
        var stopping = false
        /// The first error that ended the loop (a negative errno), 0 otherwise.
        var error: Int32 = 0
    }

    private var session: OpaquePointer { OpaquePointer(bitPattern: bits)! }

    /// Nil when the pipes cannot be made (then libfuse's loop is used).
    init?(session: OpaquePointer, configuration: LoopConfiguration, fileSystem: any FileSystem) {
        self.fileSystem = fileSystem
        bits = UInt(bitPattern: session)
        deviceFD = fuse_session_fd(session)
        maxThreads = max(1, Int(configuration.maxThreads ?? 10))
        maxIdleThreads = Int(configuration.maxIdleThreads ?? 10)
        guard let stop = Self.makePipe() else { return nil }
        guard let monitor = Self.makePipe() else {
            close(stop.read)
            close(stop.write)
            return nil
        }
        stopPipe = stop
        monitorPipe = monitor
    }

    /// A pipe whose ends are close-on-exec and non-blocking.
    private static func makePipe() -> (read: Int32, write: Int32)? {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for fd in ends {
            let flags = fcntl(fd, F_GETFL)
            guard fcntl(fd, F_SETFD, FD_CLOEXEC) == 0, flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
                close(ends[0])
                close(ends[1])
                return nil
            }
        }
        return (ends[0], ends[1])
    }

    deinit {
        for fd in [stopPipe.read, stopPipe.write, monitorPipe.read, monitorPipe.write] { close(fd) }
    }

    /// Serves requests until the session ends; returns as `fuse_session_loop` does.
    func run() -> Int32 {
        let flags = fcntl(deviceFD, F_GETFL)
        guard flags >= 0, fcntl(deviceFD, F_SETFL, flags | O_NONBLOCK) == 0 else { return fuse_session_loop(session) }
        state.withLock {
            $0.threads = 1
            $0.lastActivity = Self.now()
        }
        startWorker(0)
        monitor()
        workers.wait()
        _ = fcntl(deviceFD, F_SETFL, flags)
        var status = state.withLock { $0.error }
        // An exited session's loop returns at once with the session's error (the signal that ended
        // it, if one did): libfuse keeps that error where only its loops read it.
        if fuse_session_exited(session) != 0 {
            let sessionError = fuse_session_loop(session)
            if status == 0 { status = sessionError }
        }
        fuse_session_reset(session)
        return status
    }

    static func now() -> Int {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
    }

    private func startWorker(_ id: Int) {
        workers.enter()
        let thread = Thread { [self] in
            // Signals go to the monitor, whose sleep they interrupt.
            var signals = sigset_t()
            sigemptyset(&signals)
            for signal in [SIGHUP, SIGINT, SIGTERM] { sigaddset(&signals, signal) }
            pthread_sigmask(SIG_BLOCK, &signals, nil)
            work(id)
            workers.leave()
        }
        thread.name = "notesfs.fuse"
        thread.stackSize = 8 << 20
        thread.start()
    }

    // MARK: Workers

    private func work(_ id: Int) {
        var buffer = fuse_buf()
        defer { free(buffer.mem) }
        while lead(id, &buffer), let wake = park(id) {
            wake.wait()
            if state.withLock({ $0.stopping }) { break }
        }
        state.withLock { $0.threads -= 1 }
    }

    /// Reads and serves requests while this worker is the leader. False when the loop ends.
    private func lead(_ id: Int, _ buffer: inout fuse_buf) -> Bool {
        var lastRequest = Self.now()
        while true {
            if fuse_session_exited(session) != 0 {
                stop(error: 0)
                return false
            }
            let result = fuse_session_receive_buf(session, &buffer)
            if result == -EINTR { continue }
            if result == -EAGAIN {
                if Self.now() - lastRequest < Self.spinNanoseconds { continue }
                guard sleepUntilRequest() else { return false }
                lastRequest = Self.now()
                continue
            }
            if result <= 0 {  // 0: unmounted (libfuse marks the session exited)
                stop(error: result)
                return false
            }
            let start = Self.now()
            state.withLock { $0.busySince = start }
            if !Tmpfile.serve(buffer, fileSystem: fileSystem, deviceFD: deviceFD) { fuse_session_process_buf(session, &buffer) }
            lastRequest = Self.now()
            let stillLeader = state.withLock { state in
                guard state.leader == id else { return false }
                state.busySince = nil
                state.lastActivity = lastRequest
                return true
            }
            if !stillLeader { return !state.withLock { $0.stopping } }
        }
    }

    /// Sleeps in `poll(2)` until a request comes (or the loop must end: false).
    private func sleepUntilRequest() -> Bool {
        state.withLock { $0.leaderSleeps = true }
        var fds = [pollfd(fd: deviceFD, events: Int16(POLLIN), revents: 0), pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
        let ready = poll(&fds, 2, -1)
        let failed = ready < 0 && errno != EINTR
        let wakeMonitor = state.withLock { state -> Bool in
            state.leaderSleeps = false
            state.lastActivity = Self.now()
            defer { state.monitorSleeps = false }
            return state.monitorSleeps
        }
        if wakeMonitor { _ = write(monitorPipe.write, "m", 1) }
        if failed {
            stop(error: -errno)
            return false
        }
        return !state.withLock { $0.stopping }
    }

    /// A worker that is no longer the leader: its semaphore to wait on, or nil to end the thread
    /// (the loop ends, or enough workers are parked).
    private func park(_ id: Int) -> DispatchSemaphore? {
        state.withLock { state in
            guard !state.stopping, state.parked.count < maxIdleThreads else { return nil }
            let wake = DispatchSemaphore(value: 0)
            state.parked.append((id, wake))
            return wake
        }
    }

    private func stop(error: Int32) {
        let parked = state.withLock { state -> [DispatchSemaphore] in
            if !state.stopping, error < 0 { state.error = error }
            state.stopping = true
            defer { state.parked = [] }
            return state.parked.map(\.wake)
        }
        for wake in parked { wake.signal() }
        _ = write(stopPipe.write, "s", 1)
        _ = write(monitorPipe.write, "s", 1)
    }

    // MARK: Monitor

    /// Runs on the thread that called ``run()`` until the loop ends: hands the reading to another
    /// worker when the leader is held up by one request, and ends the loop when the session was
    /// told to exit (a signal interrupts its sleep).
    private func monitor() {
        while true {
            if fuse_session_exited(session) != 0 { stop(error: 0) }
            enum Next { case tick, sleep, done }
            let now = Self.now()
            let next = state.withLock { state -> Next in
                if state.stopping { return .done }
                if let since = state.busySince, now - since > Int(Self.monitorTickMicroseconds) * 1000 {
                    appointLeader(&state)
                }
                if state.leaderSleeps, now - state.lastActivity > Self.monitorIdleNanoseconds {
                    state.monitorSleeps = true
                    return .sleep
                }
                return .tick
            }
            switch next {
            case .done:
                return
            case .tick:
                usleep(Self.monitorTickMicroseconds)
            case .sleep:
                var fds = [pollfd(fd: monitorPipe.read, events: Int16(POLLIN), revents: 0)]
                // A second's timeout: a signal delivered to another thread still ends the loop.
                _ = poll(&fds, 1, 1000)
                var drain = [UInt8](repeating: 0, count: 64)
                while read(monitorPipe.read, &drain, drain.count) > 0 {}
                state.withLock { $0.monitorSleeps = false }
            }
        }
    }

    /// Makes a parked worker, or a new one, the leader (none when `maxThreads` are all busy).
    private func appointLeader(_ state: inout LoopState) {
        if let next = state.parked.popLast() {
            state.leader = next.id
            state.busySince = nil
            next.wake.signal()
        } else if state.threads < maxThreads {
            let id = state.nextWorker
            state.nextWorker += 1
            state.threads += 1
            state.leader = id
            state.busySince = nil
            startWorker(id)
        }
    }
}

import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A named thread doing background work in rounds: each round starts when the worker is woken
/// (``wake()``) or its interval has passed since the last one ended, until it is stopped (``stop()``);
/// ``join()`` waits for the thread to end.
///
/// The work is a loop written by its owner, so that what it keeps between rounds stays a local
/// variable of the thread:
///
/// ```swift
/// worker.start { [weak owner] worker in
///     while worker.next() != nil {
///         guard let owner else { return }
///         owner.doOneRound()
///     }
/// }
/// ```
///
/// Waking, stopping and every wait go through one ``ConditionLock``: a stop ends any wait at
/// once (``next()`` returns nil, ``pause(_:)`` false), so stopping is prompt. A worker that runs
/// once has no loop: `BackgroundWorker.start(name:) { _ in work() }`, then ``join()``.
public final class BackgroundWorker: Sendable {
    /// Why ``next()`` started a round.
    public enum Round: Sendable, Equatable {
        case woken
        case interval
    }

    private struct State: Sendable {
        var started = false
        var woken = false
        /// ``hurry()`` was called: the next ``pause(_:)`` ends (or the one under way).
        var hurried = false
        var stopping = false
        var finished = false
        /// The worker's thread while it runs (to refuse joining it from itself).
        var thread: pthread_t?
    }

    /// The thread's name (`ps -L`, `top -H`, debuggers).
    public let name: String
    /// The time between rounds when nothing wakes the worker; nil: only a wake starts one.
    public let interval: Duration?
    private let state = ConditionLock(State())

    /// A worker whose thread ``start(_:)`` starts.
    public init(name: String, interval: Duration? = nil) {
        self.name = name
        self.interval = interval
    }

    /// A worker whose thread runs `body` from now on.
    public static func start(
        name: String, interval: Duration? = nil, _ body: @escaping @Sendable (BackgroundWorker) -> Void
    ) -> BackgroundWorker {
        let worker = BackgroundWorker(name: name, interval: interval)
        worker.start(body)
        return worker
    }

    /// Starts the thread, which runs `body` (once; the loop is `body`'s, see the type's
    /// description) and ends when it returns. A worker starts at most once; one stopped before
    /// it started runs `body`, whose ``next()`` returns nil at once.
    public func start(_ body: @escaping @Sendable (BackgroundWorker) -> Void) {
        state.withLock { state in
            precondition(!state.started, "\(name) started twice")
            state.started = true
        }
        let thread = Thread { [self] in
            Self.nameCurrentThread(name)
            state.withLock { $0.thread = pthread_self() }
            body(self)
            state.withLock { state in
                state.thread = nil
                state.finished = true
            }
        }
        thread.name = name
        thread.start()
    }

    /// glibc's `pthread_setname_np`, which Glibc's module does not show (it needs `_GNU_SOURCE`).
    private static let setName: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32)? = dlsym(nil, "pthread_setname_np").map {
        unsafeBitCast($0, to: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self)
    }

    /// Names the calling thread for `ps -L`, `top -H` and `/proc/PID/task/*/comm`
    /// (`pthread_setname_np`, which takes at most 15 bytes: a longer name is cut).
    /// Foundation's `Thread.name` does not reach the kernel on Linux when set before `start()`.
    static func nameCurrentThread(_ name: String) {
        guard let setName else { return }
        var bytes = Array(name.utf8.prefix(15))
        while !bytes.isEmpty, String(validating: bytes, as: UTF8.self) == nil { bytes.removeLast() }
        bytes.append(0)
        _ = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { setName(pthread_self(), $0.baseAddress!) }
        }
    }

    /// Starts a round soon: at once when the worker waits in ``next()``, else as soon as the
    /// round under way ends (wakes meanwhile make one round). Any thread; never blocks for long.
    public func wake() {
        // Only the first wake of a round wakes the thread: every commit wakes the search indexer,
        // and a broadcast each time was a futex call per commit (6.6% of a create's `flush`).
        state.change(wakingWaitersIf: { state in
            defer { state.woken = true }
            return !state.woken
        })
    }

    /// ``wake()``, and ends the worker's ``pause(_:)`` under way (or its next one): for work that
    /// piled up past what the pause coalesces. Any thread; never blocks for long.
    public func hurry() {
        state.change(wakingWaitersIf: { state in
            defer {
                state.woken = true
                state.hurried = true
            }
            return !state.hurried
        })
    }

    /// Asks the worker to end: its ``next()`` returns nil and its ``pause(_:)`` false, at once
    /// when it waits in one. Does not wait for it (``join()``).
    public func stop() {
        state.withLock { $0.stopping = true }
    }

    /// Whether ``stop()`` was called.
    public var isStopping: Bool { state.read(\.stopping) }

    /// Waits until the thread has ended (at once when it never started). Called on the worker's
    /// own thread (an owner released there stops it in `deinit`) it returns at once.
    public func join() {
        _ = join(until: nil)
    }

    /// Waits until the thread has ended or `deadline` passes; whether it ended (true at once
    /// when it never started or this is the worker's own thread).
    @discardableResult
    public func join(until deadline: ContinuousClock.Instant?) -> Bool {
        let current = pthread_self()
        return state.wait(until: deadline) { state -> Bool? in
            if !state.started || state.finished { return true }
            if let thread = state.thread, pthread_equal(thread, current) != 0 { return true }
            return nil
        } ?? false
    }

    /// Waits for the next round: until woken (`.woken`, the wake is taken) or the interval has
    /// passed since this call (`.interval`: the end of the last round); nil once stopped. For the
    /// worker's loop.
    public func next() -> Round? {
        let deadline = interval.map { ContinuousClock.now + $0 }
        let woken: Round?? = state.wait(until: deadline) { state -> Round?? in
            if state.stopping { return .some(nil) }
            guard state.woken else { return nil }
            state.woken = false
            return .some(.woken)
        }
        if let woken { return woken }
        // The interval passed (a stop or a wake that came just then is taken here).
        return state.withLock { state -> Round? in
            if state.stopping { return nil }
            state.woken = false
            return .interval
        }
    }

    /// Waits `duration` unless stopped or hurried meanwhile (``wake()`` does not end it; the wake
    /// is kept for the next ``next()``; ``hurry()`` does, once): false when stopped. For a pause
    /// inside a round (a backoff, a coalescing delay).
    public func pause(_ duration: Duration) -> Bool {
        let deadline = ContinuousClock.now + duration
        let stopped = state.wait(until: deadline) { state -> Bool? in
            if state.stopping { return true }
            guard state.hurried else { return nil }
            state.hurried = false
            return false
        }
        return stopped != true
    }
}

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A value guarded by one lock, with a condition variable on that lock for threads that wait
/// for the value to change (`pthread_mutex_t` and `pthread_cond_t`, timed on `CLOCK_MONOTONIC`).
///
/// Every ``withLock(_:)`` wakes the waiters, which check their condition again: one thread waits
/// for another on a condition, never in a sleep loop. Nothing else may be locked inside `body` or
/// `ready` unless the caller's lock order allows it.
public final class ConditionLock<State: Sendable>: @unchecked Sendable {
    // Safe to share across threads: `state` is read and written only between
    // `pthread_mutex_lock` and `pthread_mutex_unlock` of `mutex` (in `withLock` and `wait`), and
    // the mutex and condition live at fixed addresses, allocated in `init` and freed in `deinit`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var state: State

    public init(_ initial: State) {
        state = initial
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the lock held, then wakes every thread waiting in ``wait(until:_:)``.
    public func withLock<R, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Runs `body` with the lock held, then wakes the waiters only when `body` returns true (it
    /// changed what they may wait for): a change nobody waits for costs no wake-up.
    public func change(wakingWaitersIf body: (inout State) -> Bool) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if body(&state) { pthread_cond_broadcast(condition) }
    }

    /// Reads the state with the lock held (no waiter is woken).
    public func read<R>(_ body: (State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(state)
    }

    /// Waits until `ready`, called with the lock held (first at once, then after every change),
    /// returns a value, which this returns; nil when `deadline` passes first. `ready` may change
    /// the state (to take what it waited for).
    public func wait<R>(until deadline: ContinuousClock.Instant? = nil, _ ready: (inout State) -> R?) -> R? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let value = ready(&state) { return value }
            guard let deadline else {
                pthread_cond_wait(condition, mutex)
                continue
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return nil }
            var until = timespec()
            clock_gettime(CLOCK_MONOTONIC, &until)
            // At most a day at a time (the loop waits again): no overflow of `tv_sec`.
            let (seconds, attoseconds) = min(remaining, .seconds(86_400)).components
            let nanoseconds = Int(until.tv_nsec) + Int(attoseconds / 1_000_000_000)
            until.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
            until.tv_nsec = nanoseconds % 1_000_000_000
            pthread_cond_timedwait(condition, mutex, &until)
        }
    }
}

import Foundation
import RecordStore

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The sync engine kept running: syncs, then waits for a reason to sync again (another client's
/// push by `LISTEN`/`NOTIFY`, a local commit, or ``pollInterval`` passing), until stopped.
/// Errors (server down, wrong password, …) are reported, saved for `sync status`, and retried
/// after a backoff of 1 s doubling to 60 s; they never end the loop.
///
/// The mount runs it on a ``BackgroundWorker`` (``start(database:report:)``); `sync --watch` runs
/// ``run(database:report:)`` on its main thread. Shared state: the worker (its stop, and the
/// backoff's wait, which a stop ends) and the wake pipe (written by any thread through ``wake()``
/// and by ``stop(waitingUpTo:)``, read only by the loop, which waits for it and the server's
/// `NOTIFY` in one `poll(2)`: a condition variable cannot be waited on beside a socket); the
/// engine and its connection belong to the loop's thread alone.
public final class BackgroundSync: Sendable {
    /// Seconds between syncs when nothing wakes the loop (a lost `NOTIFY`, a broken LISTEN).
    public static let pollInterval = 30.0
    static let maximumBackoff = 60.0

    /// The loop's thread (``start(database:deferring:report:)``) and its stop, which ``run(database:deferring:report:)``
    /// also obeys on the caller's thread.
    private let worker = BackgroundWorker(name: "notesfs.sync")
    /// The wake pipe: [read end, write end], both non-blocking and close-on-exec.
    private let pipeFDs: [Int32]

    /// A loop that has not started.
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` when no pipe can be made.
    public init() throws(SyncError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw .state(path: "pipe", reason: String(cString: strerror(errno))) }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        pipeFDs = fds
    }

    deinit { for fd in pipeFDs { close(fd) } }

    /// Whether the database at `databasePath` has a sync server (`sync init` was run on it).
    public static func hasServer(databasePath: String) -> Bool {
        FileManager.default.fileExists(atPath: SyncState.path(forDatabase: databasePath))
    }

    /// Makes the loop sync soon (a local commit happened); callable from any thread, never blocks.
    public func wake() {
        var byte: UInt8 = 1
        _ = write(pipeFDs[1], &byte, 1)  // a full pipe already holds a wake-up
    }

    /// Runs the loop on a new thread over `database` (a mount's own: the engine's commits reach
    /// the mount's observers as outside changes, `asExternalChange`, so the kernel hears of them).
    /// `report` is called on that thread after every sync and every failure.
    /// `deferring`: the records not to push yet (``SyncEngine/deferredRecords``).
    public func start(
        database: RecordDatabase, deferring: (@Sendable () -> Set<String>)? = nil,
        report: @escaping @Sendable (Result<SyncReport, SyncError>) -> Void
    ) {
        worker.start { [self] _ in
            _ = run(database: database, deferring: deferring, report: report)
        }
    }

    /// Ends the loop (after the step it is in) and waits up to `seconds` for a thread made by
    /// ``start(database:report:)`` to end; returns whether it did. A sync blocked on an
    /// unresponsive server may outlast the wait: what it had done is saved, and the rest is done
    /// again by the next sync.
    @discardableResult
    public func stop(waitingUpTo seconds: Double) -> Bool {
        worker.stop()
        wake()  // ends the wait for changes
        return worker.join(until: .now + .milliseconds(Int64((seconds * 1000).rounded(.up))))
    }

    /// The loop itself, on the calling thread, until ``stop(waitingUpTo:)``; returns early only
    /// when the database has no server (with that error).
    public func run(
        database: RecordDatabase, deferring: (@Sendable () -> Set<String>)? = nil, key: UnlockedKey? = nil,
        report: (Result<SyncReport, SyncError>) -> Void
    ) -> SyncError? {
        var engine: SyncEngine?
        var backoff = 1.0
        while !worker.isStopping {
            do throws(SyncError) {
                if engine == nil {
                    do { engine = try SyncEngine(database: database, key: key) } catch {
                        SyncEngine.recordFailure(error, databasePath: database.path)
                        throw error
                    }
                    engine?.deferredRecords = deferring
                    try engine?.startListening()
                }
                guard let engine else { continue }
                drainWakeUps()
                report(.success(try engine.sync()))
                backoff = 1
                try engine.waitForChanges(since: database.currentToken, timeout: Self.pollInterval, wakeFD: pipeFDs[0])
            } catch {
                report(.failure(error))
                if case .notConfigured = error { return error }
                engine = nil
                pause(backoff)
                backoff = min(backoff * 2, Self.maximumBackoff)
            }
        }
        return nil
    }

    /// Waits `seconds`, or less when stopped; local wake-ups meanwhile are dropped (the sync after
    /// the pause sees their changes anyway).
    private func pause(_ seconds: Double) {
        _ = worker.pause(.milliseconds(Int64((seconds * 1000).rounded(.up))))
        drainWakeUps()
    }

    private func drainWakeUps() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(pipeFDs[0], &buffer, buffer.count) > 0 {}
    }
}

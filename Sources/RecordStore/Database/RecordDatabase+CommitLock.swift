import Foundation
import Glibc

extension RecordDatabase {
    /// Runs `body` with the commit lock held, so that no other process commits (or checkpoints)
    /// until it returns. This process's commits still go through: they find the lock held
    /// (``lockCommits(_:shared:)``).
    ///
    /// For a change that must be planned on the state it commits on, and that keeps losing the
    /// race to other processes' commits between its plan and its commit: a rename whose link
    /// rewrites must include every note committed before it (`modify(…, unchangedSince:)`
    /// refused it each time another process committed meanwhile). Other processes' commits wait
    /// for `body`; keep it to a plan and a commit. What `body` waits for must not wait for this
    /// lock in another process: a text-index write lock there (whose holder may read a damaged
    /// record file under the shared lock) is waited for up to SQLite's busy timeout (10 s), not forever.
    ///
    /// The lock is taken with `state` held, as a commit takes it, and given back with `state`
    /// held, so that a commit of another thread of this process, which skips the lock while it is
    /// held here, ends before it is given back.
    /// - Throws: ``RecordStoreError/readOnly(path:)``, the lock's error, or what `body` throws.
    public func holdingOffOtherWriters<T>(_ body: () throws -> T) throws -> T {
        guard !isReadOnly else { throw RecordStoreError.readOnly(path: path) }
        try state.withLock { (state) throws(RecordStoreError) in
            try lockCommits(&state)  // the first hold takes it; a nested one finds it held
            state.commitLockHolds += 1
        }
        defer {
            state.withLock { state in
                state.commitLockHolds -= 1
                unlockCommits(state)  // the last hold gives it back
            }
        }
        return try body()
    }

    /// Takes the commit lock for a commit, catch-up, checkpoint or sync (with `state` held); a
    /// no-op while ``holdingOffOtherWriters(_:)`` holds it for this process.
    func lockCommits(_ state: inout DatabaseState, shared: Bool = false) throws(RecordStoreError) {
        guard state.commitLockHolds == 0 else { return }
        try Sys.lock(state.lockFD, shared: shared, path: layout.lockFile)
    }

    /// Gives back what ``lockCommits(_:shared:)`` took.
    func unlockCommits(_ state: borrowing DatabaseState) {
        if state.commitLockHolds == 0 { Sys.unlock(state.lockFD) }
    }

    /// Runs `body` while no commit writes record files, with no lock of this database held by
    /// the caller (`body` takes none): under the commit lock taken shared through a descriptor of
    /// its own, or, while this process holds the commit lock (``holdingOffOtherWriters(_:)``,
    /// which a shared lock of its own would wait for forever), under `state`, which this
    /// process's commits hold while they write. Nil when there is no lock file (a read-only
    /// database that never had a writer: nobody writes) or it cannot be taken.
    func whileNoCommitWrites<T>(_ body: () -> T) -> T? {
        // Checked and run under one hold of `state`: the lock cannot be given back in between.
        var result: T?
        let held = state.withLock { state in
            guard state.commitLockHolds > 0 else { return false }
            result = body()
            return true
        }
        if held { return result }
        guard let lock = try? Sys.open(layout.lockFile, O_RDONLY) else { return nil }
        defer { Sys.close(lock) }
        guard (try? Sys.lock(lock, shared: true, path: layout.lockFile)) != nil else { return nil }
        defer { Sys.unlock(lock) }
        return body()
    }
}

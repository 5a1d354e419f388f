import Foundation
import RecordStore

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The sync state held still while `fsck --repair` runs (its lock taken, so no sync runs between
/// a repair's drop of a damaged record and the recording of it): a record lost to local damage is
/// the server's still, so its deletion must never be pushed. ``refetch(_:)`` forgets its merge base
/// (a record with none is not deleted on the server) and has the next sync fetch it again.
public final class SyncStateHold {
    private let databasePath: String
    private let lock: Int32

    /// Takes the lock of the database's sync state; nil when it has none (it does not sync).
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    public init?(databasePath: String) throws(SyncError) {
        guard FileManager.default.fileExists(atPath: SyncState.path(forDatabase: databasePath)) else { return nil }
        self.databasePath = databasePath
        lock = try SyncEngine.lockState(databasePath: databasePath)
    }

    deinit { close(lock) }

    /// Records that the records `names` were lost to local damage: the next sync fetches the
    /// server's versions of them again, and pushes no deletion of them.
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    public func refetch(_ names: [String]) throws(SyncError) {
        guard !names.isEmpty, var state = try SyncState.load(databasePath: databasePath) else { return }
        for name in names where state.records[name] != nil {
            state.records[name] = nil
            state.lost.insert(name)
        }
        try state.save(databasePath: databasePath)
    }
}

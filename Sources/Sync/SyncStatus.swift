import Foundation
import Postgres
import RecordStore

/// What `notesfs sync status` shows; read from the local state and database only (no server).
public struct SyncStatus: Sendable {
    /// The server as configured, with any password replaced by `***`.
    public var server: String
    public var lastSync: Date?
    public var lastError: String?
    /// Local changes not pushed yet.
    public var pendingChanges: Int
    public var serverSeq: Int64
    public var conflicts: [ConflictCopy]
    /// Local records the last push could not send, and why (``PushFailures``).
    public var failures: [PushFailure]
    /// Server records set aside (``SyncState/setAside``), by name.
    public var setAside: [SetAsideRecord]
    /// Fields decided by the later edit (``SyncState/decided``), newest last.
    public var decided: [DecidedConflict]
    /// Server values applied clamped (``SyncState/clamped``), newest last.
    public var clamped: [String]
    /// Server records set aside beyond those kept whole (``SyncState/setAsideSummaries``), by reason.
    public var setAsideSummaries: [SetAsideSummary]
    /// How many server records are set aside in all.
    public var setAsideCount: Int
    /// The ``SyncState/keyID`` of an encrypted server, nil for a readable one.
    public var keyID: String?
    /// Whether the key of an encrypted server is on this machine (``LocalKeyFile``).
    public var hasKey: Bool

    /// The status of a database; nil when it has no server.
    ///
    /// - Throws: ``SyncError/state(path:reason:)``, ``SyncError/store(_:)``.
    public static func read(database: RecordDatabase) throws(SyncError) -> SyncStatus? {
        guard let state = try SyncState.load(databasePath: database.path) else { return nil }
        let pending = try SyncEngine.pendingChanges(database: database, state: state)
        return SyncStatus(
            server: redacted(state.server), lastSync: state.lastSync, lastError: state.lastError, pendingChanges: pending.count,
            serverSeq: state.serverSeq, conflicts: state.conflicts,
            failures: PushFailures.load(databasePath: database.path).values.sorted { $0.recordName < $1.recordName },
            setAside: state.setAside.values.sorted { $0.recordName < $1.recordName }, decided: state.decided, clamped: state.clamped,
            setAsideSummaries: state.setAsideSummaries.values.sorted { $0.count > $1.count }, setAsideCount: state.setAsideCount,
            keyID: state.keyID, hasKey: state.keyID != nil && (try? LocalKeyFile.load(databasePath: database.path)) != nil)
    }

    /// A conninfo or URL without its password (``Postgres/ConnectionString/redacted(_:)``).
    public static func redacted(_ server: String) -> String { ConnectionString.redacted(server) }
}

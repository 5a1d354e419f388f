import Foundation
import Notes
import POSIX
import Postgres
import RecordStore

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// What one ``SyncEngine/sync()`` did.
public struct SyncReport: Sendable, Equatable {
    /// Local changes the server accepted (saves and deletes).
    public var pushed = 0
    /// Server changes applied locally.
    public var fetched = 0
    /// Records whose local and server changes were merged.
    public var merged = 0
    /// Conflict copies made.
    public var conflictCopies: [ConflictCopy] = []
    /// Local records the push could not send (see ``PushFailures``); tried again by the next sync.
    public var failures: [PushFailure] = []
    /// Server records this sync set aside (``SyncState/setAside``): it could not read or apply them.
    public var setAside: [SetAsideRecord] = []
    /// How many of ``setAside`` a sync's output names one by one (the rest it counts).
    public static let setAsideShownLimit = 20
    /// What the sync found about identities and did about them (``SyncEngine/checkIdentity(_:)``).
    public var notices: [String] = []
    /// Local changes left for a later sync: files still open for writing (``SyncEngine/deferredRecords``).
    public var deferred = 0
    /// Fields both sides changed differently, decided by the later edit (a note renamed on two machines).
    public var decided: [DecidedConflict] = []
}

/// How far a sync has come in one direction.
public struct SyncProgress: Sendable, Equatable {
    public enum Direction: Sendable { case down, up }
    public var direction: Direction
    /// Records fetched or pushed so far in this direction, and how many there are in all (as
    /// counted when the direction started: the server may get more meanwhile).
    public var records: Int
    public var total: Int
    /// Payload bytes (JSON) moved so far; assets are not counted.
    public var bytes: Int64
}

/// Replicates one local database to and from its server container, as `CKSyncEngine` does.
///
/// A sync fetches the server's changes since the saved server seq and applies them through the
/// local store's `modify` (merging those that met local changes), then pushes the local changes
/// since the saved local token, each only over the server version it was made against; a push that
/// lost a race is fetched, merged and pushed again in the next round.
///
/// Not thread-safe and not `Sendable` (it owns a libpq connection): one engine is used from one
/// thread. Two processes syncing one database are serialised by `flock` on `<db>/sync/lock`,
/// held for the whole of ``sync()``; that lock guards `<db>/sync/` (state.json and records/).
public final class SyncEngine {
    public let database: RecordDatabase
    /// The state as last saved (or about to be saved); guarded by `<db>/sync/lock` while syncing.
    public internal(set) var state: SyncState
    /// The server; its cipher follows ``SyncState/keyID`` (``checkKeys(server:)``).
    var container: ServerContainer
    /// Pushes and fetches go in transactions and pages of this many records.
    var batchSize = 200
    /// Records whose last push lost to another version; the next pull fetches them by name.
    var conflicted: Set<String> = []
    /// Records lost to local damage being fetched again (``SyncState/lost``): the server's version
    /// is taken even when this client pushed it (the local record is gone, not deleted).
    var refetching: Set<String> = []
    /// Whether this engine raised the sync generation already (``checkIdentity(_:)``: once per engine).
    var generationRaised = false
    /// Whether the connection listens on ``ServerSchema/channel`` (set by ``waitForChanges(since:timeout:)``).
    var isListening = false
    /// The records not to push yet (a mount's files open for writing, changed since their last
    /// fsync: ``NotesFS/NotesFileSystem/recordsBeingWritten()``); they stay pending, and the sync
    /// after the writer's close pushes them. Called once per push.
    public var deferredRecords: (@Sendable () -> Set<String>)?
    /// Told after every page fetched and every batch pushed (for a progress bar).
    public var progress: ((SyncProgress) -> Void)?
    /// Rounds of fetch-then-push before a sync gives up on records that keep losing races.
    static let maximumRounds = 5

    /// Opens the engine of a database that `sync init` connected to a server.
    ///
    /// - Throws: ``SyncError/notConfigured(path:)``, ``SyncError/server(_:)`` (unreachable,
    ///   wrong password), ``SyncError/newerServerSchema(found:supported:)``, ``SyncError/keys(_:)``
    ///   when the database syncs encrypted and its key is not here.
    ///
    /// `key`: the server's data key unlocked for this process (``unlock(database:passphrase:)``),
    /// for a database that keeps none on disk (`sync init --ask-passphrase`).
    public init(database: RecordDatabase, key: UnlockedKey? = nil) throws(SyncError) {
        guard let state = try SyncState.load(databasePath: database.path, includingRecords: false) else {
            throw .notConfigured(path: database.path)
        }
        self.database = database
        self.state = state
        // Note history: a merge keeps the version it replaces; another machine's change keeps none
        // here (its own machine kept it, and that version syncs too).
        if database.installedCommitHook == nil { VersionHistory.install(on: database) }
        let connection: Connection
        do { connection = try Connection(state.connectionString(databasePath: database.path)) } catch { throw .server(error) }
        try ServerSchema.check(connection)
        let cipher: RowCipher?
        if let key, key.key.keyID == state.keyID {
            cipher = RowCipher(key: key.key)
        } else {
            cipher = try Self.cipher(for: state, databasePath: database.path)
        }
        container = ServerContainer(connection: connection, cipher: cipher)
        // Beside a mount (the CLI's sync): what the mount holds back, this holds back too.
        let path = database.path
        deferredRecords = { OpenWriters.read(databasePath: path) }
    }

    /// Fetches, merges and pushes until both sides agree (or ``maximumRounds`` pass), saving the
    /// state after every server transaction. The outcome (success or the error) is saved too, for
    /// `sync status`.
    ///
    /// - Throws: ``SyncError``; what was synced before the error stays synced.
    @discardableResult
    public func sync() throws(SyncError) -> SyncReport {
        let lock = try Self.lockState(databasePath: database.path)
        defer { close(lock) }
        try state.reload(databasePath: database.path)
        var report = SyncReport()
        do {
            try checkIdentity(&report)
            var settled = false
            for _ in 0..<Self.maximumRounds where !settled {
                try pull(&report)
                settled = try push(&report)  // no change lost a race
            }
            state.lastSync = Date()
            // What it did stays done; what kept losing races waits for the next sync, and says so.
            state.lastError = settled ? nil : Self.unsettledMessage
            try state.save(databasePath: database.path)
        } catch {
            state.lastError = error.description
            try? state.save(databasePath: database.path)
            throw error
        }
        return report
    }

    /// The last error of a sync whose changes still lost races to other clients after
    /// ``maximumRounds`` rounds of fetch, merge and push.
    static let unsettledMessage =
        "some changes lost \(maximumRounds) races in a row to other machines' pushes: they stay pending for the next sync"

    /// Opens the engine and syncs once; a failure to connect is saved in the state as the last
    /// error too (for `sync status`), like a failure of the sync itself.
    ///
    /// - Throws: ``SyncError``.
    @discardableResult
    public static func sync(database: RecordDatabase) throws(SyncError) -> SyncReport {
        let engine: SyncEngine
        do { engine = try SyncEngine(database: database) } catch {
            recordFailure(error, databasePath: database.path)
            throw error
        }
        return try engine.sync()
    }

    /// Saves `error` as the last error of the database's sync state (for `sync status`), when it
    /// has one; for failures before an engine exists (connecting). Best effort: a state that
    /// cannot be saved keeps its previous error.
    public static func recordFailure(_ error: SyncError, databasePath: String) {
        guard let lock = try? lockState(databasePath: databasePath) else { return }
        defer { close(lock) }
        guard var state = try? SyncState.load(databasePath: databasePath, includingRecords: false), state.lastError != error.description
        else { return }
        state.lastError = error.description
        try? state.save(databasePath: databasePath)
    }

    /// Takes `<db>/sync/lock` (waiting for another sync of this database to finish).
    static func lockState(databasePath: String) throws(SyncError) -> Int32 {
        try DurableFile.makeDirectory(databasePath + "/sync")
        let path = databasePath + "/sync/lock"
        return try DurableFile.call { () throws(SystemCallError) in
            let fd = try Syscall.open(path, O_RDWR | O_CREAT)
            do throws(SystemCallError) { try Syscall.lock(fd, path: path) } catch {
                Syscall.close(fd)
                throw error
            }
            return fd
        }
    }

    /// Names the local version `tag` of a record on the server, so a re-push of it is recognised.
    func origin(tag: String?) -> String { "\(state.clientID)/\(tag ?? "-")" }

    /// The local change tag of a version this client pushed, from its origin; nil when another
    /// client (or a delete) wrote it.
    func pushedTag(_ origin: String) -> String? {
        let prefix = state.clientID + "/"
        guard origin.hasPrefix(prefix) else { return nil }
        let tag = String(origin.dropFirst(prefix.count))
        return tag.hasPrefix("deleted@") ? nil : tag
    }

    /// Names this client's delete of the server version `seq` of a record.
    func deleteOrigin(seq: Int64?) -> String { "\(state.clientID)/deleted@\(seq.map(String.init) ?? "-")" }
}

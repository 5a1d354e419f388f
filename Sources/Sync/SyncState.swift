import Foundation
import Postgres

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// What one local database knows about its server: the small things in `<db>/sync/state.json`,
/// the synced records (the bases of merges) one file each in `<db>/sync/records/`
/// (``SyncedRecordFiles``), so that a save writes what changed, not the whole database.
///
/// # Crash safety
/// A save happens only after the server transaction or local `modify` it records has committed,
/// and writes, in this order:
/// 1. each changed record file to a temp file (`<file>.tmp-<pid>`), none fsynced;
/// 2. one flush of them all (syncfs(2) for a batch, an fsync each for a few), then
///    the renames over the record files, the unlinks of removed records, one fsync of
///    `records/` — every record file of the save is durable from here on (``DurableFileBatch``);
/// 3. state.json (``DurableFile``: temp, fsync, rename, fsync of `sync/`).
///
/// A `kill -9` (or power loss: step 2 is durable before step 3 begins) between any two of these
/// writes leaves state.json as it was and each record file either as it was or as saved:
/// - as it was (not reached yet): the previous state of that record, which the engine already
///   recovers from — a push is recognised on the server by its origin (``PushChange/origin``)
///   and taken as saved when pulled again; a pull is fetched again from the old server seq, and
///   the record, already the server's version locally, merges cleanly with it;
/// - as saved: the record's new state, true since the transaction committed; the old server seq
///   fetches that change again and it is skipped (`serverSeq` equal), the old local token lists
///   the record again and it is skipped (`localTag` equal); a removed file is not pushed again.
/// What a save never leaves is state.json newer than a record file it depends on (a server seq
/// past a change whose record file is missing would never fetch it again): step 3 comes last.
/// Temp files left behind are ignored, and removed by the next ``reload(databasePath:)``.
///
/// The whole state is read and written under `<db>/sync/lock` (see ``SyncEngine``); reading it
/// without the lock (`sync status`) sees a consistent state by the same argument.
public struct SyncState: Sendable, Equatable {
    /// 2: records in `records/`; 1: records inside state.json (migrated by the first save).
    public static let formatVersion = 2

    public var format = SyncState.formatVersion
    /// The libpq conninfo or URL of the server (as given to `sync init`, without its password:
    /// see ``passwordPath(forDatabase:)``).
    public var server: String
    /// This database's name on the server (a UUID made at `sync init`), part of every origin.
    public var clientID: String
    /// The host name written into conflict copies' titles.
    public var host: String
    /// The epoch of the server this database syncs with (``SyncEngine/checkIdentity(_:)``); nil
    /// before its first sync with a server that has one.
    public var serverEpoch: String?
    /// The ``DataKey/keyID`` of the server's data key when the server is encrypted (the key itself
    /// is in ``LocalKeyFile``); nil for a readable server.
    public var keyID: String?
    /// How many syncs this database started: the server keeps the highest for this client ID, and
    /// a copy of this database that is behind it is told apart (``SyncEngine/checkIdentity(_:)``).
    public var generation: Int64 = 0
    /// The generation the server was last seen to hold for this client (written there and read
    /// back): a server holding less lost this client's syncs since (restored from an older dump).
    public var confirmedGeneration: Int64 = 0
    /// Every server change up to this seq has been fetched and applied (the server change token).
    public var serverSeq: Int64 = 0
    /// Every local change up to this local token has been pushed (``RecordStore/ChangeToken``);
    /// nil before the first push: every local record is looked at.
    public var localToken: String?
    /// Every record synced at least once, by record name: the base for merges.
    public var records = SyncedRecords()
    /// Conflict copies made, newest last, for `sync status`.
    public var conflicts: [ConflictCopy] = []
    /// Fields decided by the later edit, newest last (at most ``decidedLimit``), for `sync status`.
    public var decided: [DecidedConflict] = []
    /// How many ``decided`` entries are kept.
    public static let decidedLimit = 100
    /// Server records this notesfs could not read or apply, by record name (``SetAsideRecord``):
    /// the rest synced past them; a newer server version of one, or a newer notesfs, tries again.
    public var setAside: [String: SetAsideRecord] = [:]
    /// Server records set aside beyond the first ``setAsideLimit``, by reason (the record name
    /// taken out of it): a count and a few names each, so that a server full of junk keeps the
    /// state small. A newer notesfs reads the server again from their lowest seq.
    public var setAsideSummaries: [String: SetAsideSummary] = [:]
    /// How many set-aside records are kept whole (``setAside``).
    public static let setAsideLimit = 50
    /// How many reasons ``setAsideSummaries`` tells apart; the rest are counted under one.
    public static let summaryReasonLimit = 20
    /// How many server records are set aside, whole and summarised (a summarised row set aside
    /// again, fetched as a missing folder of another page, may be counted twice).
    public var setAsideCount: Int { setAside.count + setAsideSummaries.values.reduce(0) { $0 + $1.count } }

    /// Keeps `entry`: whole while fewer than ``setAsideLimit`` are (or when its record is kept
    /// whole already), else counted in ``setAsideSummaries``.
    mutating func keepSetAside(_ entry: SetAsideRecord) {
        if setAside[entry.recordName] != nil || setAside.count < Self.setAsideLimit {
            setAside[entry.recordName] = entry
            return
        }
        var reason = entry.reason.replacingOccurrences(of: entry.recordName, with: "…")
        if setAsideSummaries[reason] == nil, setAsideSummaries.count >= Self.summaryReasonLimit { reason = "other reasons" }
        var summary =
            setAsideSummaries[reason] ?? SetAsideSummary(reason: reason, count: 0, names: [], lowestSeq: entry.seq, reader: entry.reader)
        summary.count += 1
        if summary.names.count < SetAsideSummary.nameLimit { summary.names.append(entry.recordName) }
        summary.lowestSeq = min(summary.lowestSeq, entry.seq)
        summary.reader = min(summary.reader, entry.reader)
        setAsideSummaries[reason] = summary
    }
    /// Server values applied clamped (``ServerValueRules/clamped(_:now:)``), newest last (at most
    /// ``clampedLimit``), for `sync status`: "record name: what".
    public var clamped: [String] = []
    /// How many ``clamped`` entries are kept.
    public static let clampedLimit = 100
    /// Whether some synced records hold bases kept through a reset of the server, unconfirmed
    /// (``SyncedRecord/unconfirmedSeq``): the next complete pull forgets those it did not confirm.
    public var unconfirmedBases = false
    /// Records lost to local damage (``SyncStateHold/refetch(_:)``): the next sync fetches them again.
    public var lost: Set<String> = []
    public var lastSync: Date?
    /// The last sync's error, nil when it succeeded.
    public var lastError: String?

    /// A new name at every save of state.json: ``reload(databasePath:)`` keeps the index when
    /// state.json is still the one this value last read or wrote.
    var saveID: String?
    /// `records/` as last seen by this value (after reading or writing its files): another
    /// process's writes there change it, even when it was killed before its state.json.
    var recordsStamp: DirectoryStamp?
    /// Whether ``records`` was read from the record files (``load(databasePath:includingRecords:)``).
    var recordsLoaded = false

    public init(server: String, clientID: String, host: String) {
        self.server = server
        self.clientID = clientID
        self.host = host
    }

    /// The file that keeps the server's password (mode 0600), so that state.json holds none:
    /// ``server`` is kept without it. Absent when the server string had none (`.pgpass`, a
    /// `service`, a certificate).
    public static func passwordPath(forDatabase databasePath: String) -> String { databasePath + "/sync/password" }

    /// The libpq string to connect with: ``server`` with the password kept beside the state.
    public func connectionString(databasePath: String) -> String {
        guard let data = FileManager.default.contents(atPath: Self.passwordPath(forDatabase: databasePath)) else { return server }
        return ConnectionString.adding(password: String(decoding: data, as: UTF8.self), to: server)
    }

    /// Sets ``server`` to `conninfo` without its password, and keeps the password (if any) in
    /// ``passwordPath(forDatabase:)``, durably, before the state that needs it is saved.
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    public mutating func setServer(_ conninfo: String, databasePath: String) throws(SyncError) {
        let split = ConnectionString.splittingPassword(conninfo) ?? (conninfo, nil)
        let path = Self.passwordPath(forDatabase: databasePath)
        try DurableFile.makeDirectory(databasePath + "/sync")
        if let password = split.password {
            try DurableFile.write(Data(password.utf8), to: path)
        } else if FileManager.default.fileExists(atPath: path) {
            guard unlink(path) == 0 else { throw .state(path: path, reason: String(cString: strerror(errno))) }
        }
        server = split.conninfo
    }

    /// Whether `conninfo` names the server this state syncs with (its password aside).
    public func isServer(_ conninfo: String) -> Bool {
        conninfo == server || ConnectionString.splittingPassword(conninfo)?.conninfo == server
    }

    /// The state file of the database at `databasePath`.
    public static func path(forDatabase databasePath: String) -> String { databasePath + "/sync/state.json" }

    /// Reads the state of a database; nil when it has none (never `sync init`). Without
    /// `includingRecords` only state.json is read (O(1)): ``records`` stays empty until
    /// ``reload(databasePath:)``. A format 1 state.json brings its records in memory, as changes
    /// that the next save writes into their files (the migration).
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` for an unreadable or damaged file.
    public static func load(databasePath: String, includingRecords: Bool = true) throws(SyncError) -> SyncState? {
        guard let file = try StateFile.read(databasePath: databasePath) else { return nil }
        return try SyncState(file, databasePath: databasePath, includingRecords: includingRecords, removingLeftovers: false)
    }

    /// Brings the state up to date with the database's files (before a sync, holding
    /// `<db>/sync/lock`): reads state.json, and the record files too unless nothing but this
    /// value wrote them since it last did (same ``saveID``, same ``recordsStamp``, no unsaved
    /// change) — so a long-running engine reads O(1) per sync, not O(records). Keeps the state
    /// as it is when the database has none.
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    public mutating func reload(databasePath: String) throws(SyncError) {
        guard let file = try StateFile.read(databasePath: databasePath) else { return }
        let directory = SyncedRecordFiles.directory(forDatabase: databasePath)
        let unchanged =
            file.format == Self.formatVersion && recordsLoaded && records.changes.isEmpty && records.directory == directory
            && file.saveID == saveID && DirectoryStamp(directory) == recordsStamp
        if unchanged {
            var updated = try SyncState(file, databasePath: databasePath, includingRecords: false, removingLeftovers: false)
            updated.records = records
            updated.recordsLoaded = true
            updated.recordsStamp = recordsStamp
            self = updated
        } else {
            self = try SyncState(file, databasePath: databasePath, includingRecords: true, removingLeftovers: true)
        }
    }

    /// Writes the state durably: the changed record files, then state.json (see "Crash safety"
    /// above for the order and why).
    ///
    /// - Throws: ``SyncError/state(path:reason:)``; what was written stays written, and the
    ///   changes not written stay to be saved again.
    public mutating func save(databasePath: String) throws(SyncError) {
        try DurableFile.makeDirectory(databasePath + "/sync")
        if !records.changes.isEmpty {
            let directory = SyncedRecordFiles.directory(forDatabase: databasePath)
            try DurableFile.makeDirectory(directory)
            try records.save(in: directory)
            recordsStamp = DirectoryStamp(directory)
        }
        let saveID = UUID.random().uuidString
        try StateFile(self, saveID: saveID).write(databasePath: databasePath)
        self.saveID = saveID
        format = Self.formatVersion
    }

    private init(_ file: StateFile, databasePath: String, includingRecords: Bool, removingLeftovers: Bool) throws(SyncError) {
        self.init(server: file.server, clientID: file.clientID, host: file.host)
        format = file.format
        serverSeq = file.serverSeq
        localToken = file.localToken
        conflicts = file.conflicts
        setAside = file.setAside ?? [:]
        setAsideSummaries = file.setAsideSummaries ?? [:]
        decided = file.decided ?? []
        clamped = file.clamped ?? []
        lost = Set(file.lost ?? [])
        unconfirmedBases = file.unconfirmedBases ?? false
        serverEpoch = file.serverEpoch
        keyID = file.keyID
        generation = file.generation ?? 0
        confirmedGeneration = file.confirmedGeneration ?? 0
        lastSync = file.lastSync
        lastError = file.lastError
        saveID = file.saveID
        let directory = SyncedRecordFiles.directory(forDatabase: databasePath)
        if file.format == 1 {
            records.directory = directory
            for (name, record) in file.records ?? [:] {
                records[name] = SyncedRecord(
                    recordType: record.recordType, serverSeq: record.serverSeq, localTag: record.localTag, base: record.base)
            }
            recordsLoaded = true
        } else if includingRecords {
            // The stamp before the listing: a write after it makes the next reload read again.
            recordsStamp = DirectoryStamp(directory)
            try records.read(from: directory, removingLeftovers: removingLeftovers)
            recordsLoaded = true
        }
    }
}

/// A server record set aside: this notesfs could not read it (a value the store would refuse, a
/// field type it does not know, a payload over its limit) or apply it (it would change a local
/// record's type). Kept in the state, listed by `sync status`, fetched again when a notesfs with a
/// newer ``RecordPayload/readerVersion`` syncs; a newer server version of it replaces it.
public struct SetAsideRecord: Codable, Sendable, Equatable {
    public var recordName: String
    public var recordType: String
    /// The server version set aside.
    public var seq: Int64
    public var reason: String
    /// The ``RecordPayload/readerVersion`` that could not read it.
    public var reader: Int
    public var since: Date
    /// It references a record this database lacks: fetched again at every sync until it applies.
    public var awaitsRecord: Bool
}

/// Server records set aside for one reason beyond ``SyncState/setAsideLimit``: how many, the
/// first few names, and from which seq a newer notesfs reads them again.
public struct SetAsideSummary: Codable, Sendable, Equatable {
    public var reason: String
    public var count: Int
    /// The first ``nameLimit`` record names.
    public var names: [String]
    public var lowestSeq: Int64
    /// The lowest ``RecordPayload/readerVersion`` that set one aside.
    public var reader: Int

    static let nameLimit = 5
}

/// A field both this machine and another changed differently, decided by the later edit (a note
/// renamed differently on two machines): which value was kept and which dropped, for `sync status`.
public struct DecidedConflict: Codable, Sendable, Equatable {
    public var recordName: String
    public var recordType: String
    public var key: String
    /// The values as shown to the user (a string's text, else the value's description).
    public var kept: String
    public var dropped: String
    public var date: Date
}

/// A conflict copy: a note whose local text could not be merged with the server's.
public struct ConflictCopy: Codable, Sendable, Equatable {
    /// The note that kept the server's text.
    public var recordName: String
    /// The new note holding the local text.
    public var copyRecordName: String
    public var title: String
    public var date: Date
}

/// The identity and modification time of a directory (`stat`): renaming or unlinking a file in
/// it changes the time.
struct DirectoryStamp: Sendable, Equatable {
    var device: UInt64
    var inode: UInt64
    var seconds: Int
    var nanoseconds: Int

    /// The stamp of the directory at `path`; nil when there is none.
    init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        seconds = Int(info.st_mtim.tv_sec)
        nanoseconds = Int(info.st_mtim.tv_nsec)
    }
}

/// state.json as written: the small fields of ``SyncState`` (and, in format 1, every record).
private struct StateFile: Codable {
    var format: Int
    var server: String
    var clientID: String
    var host: String
    var serverSeq: Int64
    var localToken: String?
    /// Format 1: every synced record. Format 2 writes it empty, so that a notesfs that knows only
    /// format 1 reads the file and says it is newer (instead of calling it damaged).
    var records: [String: FormatOneRecord]?
    var conflicts: [ConflictCopy]
    /// Absent from files written before records were set aside.
    var setAside: [String: SetAsideRecord]?
    /// Absent from files written before set-aside records were summarised.
    var setAsideSummaries: [String: SetAsideSummary]?
    /// Absent from files written before decided fields were kept.
    var decided: [DecidedConflict]?
    /// Absent from files written before clamped values were kept.
    var clamped: [String]?
    /// Absent from files written before lost records were fetched again.
    var lost: [String]?
    /// Absent from files written before bases were kept through resets.
    var unconfirmedBases: Bool?
    /// Absent from files written before servers had epochs and clients generations.
    var serverEpoch: String?
    /// Absent for a readable server (and from files written before encryption).
    var keyID: String?
    var generation: Int64?
    /// Absent from files written before restored servers were told apart.
    var confirmedGeneration: Int64?
    var lastSync: Date?
    var lastError: String?
    /// Format 2: ``SyncState/saveID``.
    var saveID: String?

    /// A synced record as format 1 kept it inside state.json.
    struct FormatOneRecord: Codable {
        var recordType: String
        var serverSeq: Int64
        var localTag: String?
        var base: String
    }

    init(_ state: SyncState, saveID: String) {
        format = SyncState.formatVersion
        server = state.server
        clientID = state.clientID
        host = state.host
        serverSeq = state.serverSeq
        localToken = state.localToken
        records = [:]
        conflicts = state.conflicts
        setAside = state.setAside.isEmpty ? nil : state.setAside
        setAsideSummaries = state.setAsideSummaries.isEmpty ? nil : state.setAsideSummaries
        serverEpoch = state.serverEpoch
        keyID = state.keyID
        generation = state.generation
        confirmedGeneration = state.confirmedGeneration == 0 ? nil : state.confirmedGeneration
        decided = state.decided.isEmpty ? nil : state.decided
        clamped = state.clamped.isEmpty ? nil : state.clamped
        lost = state.lost.isEmpty ? nil : state.lost.sorted()
        unconfirmedBases = state.unconfirmedBases ? true : nil
        lastSync = state.lastSync
        lastError = state.lastError
        self.saveID = saveID
    }

    /// The state file of the database at `databasePath`; nil when there is none.
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` for an unreadable or damaged file, or one of a
    ///   newer format.
    static func read(databasePath: String) throws(SyncError) -> StateFile? {
        let path = SyncState.path(forDatabase: databasePath)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw .state(path: path, reason: "cannot be read") }
        let file: StateFile
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            file = try decoder.decode(StateFile.self, from: data)
        } catch {
            throw .state(path: path, reason: "damaged: \(error)")
        }
        guard file.format <= SyncState.formatVersion else {
            throw .state(path: path, reason: "format \(file.format) is newer than this notesfs")
        }
        guard file.format >= 1 else { throw .state(path: path, reason: "damaged: format \(file.format)") }
        return file
    }

    func write(databasePath: String) throws(SyncError) {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do { data = try encoder.encode(self) } catch { throw .state(path: SyncState.path(forDatabase: databasePath), reason: "\(error)") }
        try DurableFile.write(data, to: SyncState.path(forDatabase: databasePath))
    }
}

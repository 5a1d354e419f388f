import Foundation

/// What one local database knows about its server, kept in `<db>/sync/state.json`.
///
/// Written whole (``DurableFile``) only after the server transaction it describes has committed,
/// so a crash leaves the previous state: changes it had not recorded as pushed are pushed again,
/// which the server recognises by their origin (see ``PushChange/origin``).
public struct SyncState: Codable, Sendable, Equatable {
    public static let formatVersion = 1

    public var format = SyncState.formatVersion
    /// The libpq conninfo or URL of the server (as given to `sync init`).
    public var server: String
    /// This database's name on the server (a UUID made at `sync init`), part of every origin.
    public var clientID: String
    /// The host name written into conflict copies' titles.
    public var host: String
    /// Every server change up to this seq has been fetched and applied (the server change token).
    public var serverSeq: Int64 = 0
    /// Every local change up to this local token has been pushed (``RecordStore/ChangeToken``);
    /// nil before the first push: every local record is looked at.
    public var localToken: String?
    /// Every record synced at least once, by record name: the base for merges.
    public var records: [String: SyncedRecord] = [:]
    /// Conflict copies made, newest last, for `sync status`.
    public var conflicts: [ConflictCopy] = []
    public var lastSync: Date?
    /// The last sync's error, nil when it succeeded.
    public var lastError: String?

    public init(server: String, clientID: String, host: String) {
        self.server = server
        self.clientID = clientID
        self.host = host
    }

    /// The state file of the database at `databasePath`.
    public static func path(forDatabase databasePath: String) -> String { databasePath + "/sync/state.json" }

    /// Reads the state of a database; nil when it has none (never `sync init`).
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` for an unreadable or damaged file.
    public static func load(databasePath: String) throws(SyncError) -> SyncState? {
        let path = path(forDatabase: databasePath)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw .state(path: path, reason: "cannot be read") }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            let state = try decoder.decode(SyncState.self, from: data)
            guard state.format <= formatVersion else {
                throw SyncError.state(path: path, reason: "format \(state.format) is newer than this notesfs")
            }
            return state
        } catch let error as SyncError {
            throw error
        } catch {
            throw .state(path: path, reason: "damaged: \(error)")
        }
    }

    /// Writes the state durably (temp file, fsync, rename, directory fsync).
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    public func save(databasePath: String) throws(SyncError) {
        try DurableFile.makeDirectory(databasePath + "/sync")
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do { data = try encoder.encode(self) } catch { throw .state(path: Self.path(forDatabase: databasePath), reason: "\(error)") }
        try DurableFile.write(data, to: Self.path(forDatabase: databasePath))
    }
}

/// The last version of a record both this database and the server agreed on.
public struct SyncedRecord: Codable, Sendable, Equatable {
    public var recordType: String
    /// The server's seq (change tag) of that version.
    public var serverSeq: Int64
    /// The local change tag of that version; nil when the local record has changed from it in a
    /// way this engine made (a merge) and still has to push.
    public var localTag: String?
    /// That version's payload JSON (``RecordPayload/jsonText``): the base of a three-way merge.
    public var base: String
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

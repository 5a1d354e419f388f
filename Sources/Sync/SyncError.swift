import Postgres
import RecordStore

/// Why a sync (or `sync init`) failed; every case says what to do in its message.
public enum SyncError: Error, Sendable, CustomStringConvertible {
    /// The server could not be reached, refused us, or failed a statement.
    case server(PostgresError)
    /// The local database failed.
    case store(RecordStoreError)
    /// The server's schema is newer than this notesfs knows.
    case newerServerSchema(found: Int, supported: Int)
    /// The database has no server: run `notesfs sync init URL` first.
    case notConfigured(path: String)
    /// The local sync state could not be read or written.
    case state(path: String, reason: String)
    /// A server record could not be decoded.
    case damagedServerRecord(String, reason: String)
    /// Sealing or opening failed: a wrong passphrase or recovery key, refused key parameters,
    /// libcrypto missing.
    case encryption(String)
    /// The server's encryption and this database's do not agree (a readable database meeting an
    /// encrypted server, a key this machine lacks, a key changed on the server): the message says
    /// what to run. Nothing was pushed.
    case keys(String)

    public var description: String {
        switch self {
        case .server(let error): "server: \(error)" + Self.advice(for: error)
        case .store(let error): "local database: \(error)"
        case .newerServerSchema(let found, let supported):
            "the server's schema is version \(found), this notesfs knows up to \(supported): upgrade notesfs"
        case .notConfigured(let path): "\(path) has no sync server: run 'notesfs sync init URL' first"
        case .state(let path, let reason): "sync state \(path): \(reason)"
        case .damagedServerRecord(let name, let reason): "server record \(name): \(reason)"
        case .encryption(let message): "encryption: \(message)"
        case .keys(let message): message
        }
    }

    /// A failure to seal, open or derive a key, as the sync reports it.
    init(_ error: EncryptionError) { self = .encryption(error.description) }

    /// What a server failure in the middle of a sync means for the user, when its message does
    /// not say: the server rolls back what it had not committed, so the next sync redoes it.
    static func advice(for error: PostgresError) -> String {
        if error.kind == .connectionLost {
            return
                " (the connection broke during the sync: nothing local is lost, the next sync sends again what the server did not commit)"
        }
        switch error.sqlState {
        case "57014":
            return " (the server cancelled a statement that ran out of time, see its statement_timeout and locks:"
                + " nothing local is lost, the next sync tries again)"
        case "42501":
            return " (the server's user lacks a right sync needs: SELECT, INSERT, UPDATE, DELETE on the tables notesfs_records,"
                + " notesfs_assets, notesfs_asset_chunks, notesfs_pushes, notesfs_clients, notesfs_server, notesfs_keys, notesfs_schema and"
                + " USAGE, SELECT on the sequence notesfs_seq; as their owner: GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES"
                + " IN SCHEMA public TO user; GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO user. sync init also needs"
                + " CREATE on the database)"
        case "42P01":
            return " (the server has no notesfs tables here: it was never set up, or they were dropped;"
                + " run 'notesfs sync init URL' to create them, and the next sync uploads this database again)"
        case "57P01", "57P02", "57P03":
            return " (the server ended the session: nothing local is lost, the next sync tries again)"
        default: return ""
        }
    }
}

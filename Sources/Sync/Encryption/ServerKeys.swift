import Foundation
import Postgres

/// The wrapped data key an encrypted server holds (`notesfs_keys`, see ``ServerSchema``): one row
/// wrapped by the passphrase, one by the recovery key. No row: a readable server.
///
/// What the server can do with them: nothing but hand them out (a wrapped key opens only with the
/// passphrase or the recovery key, and only for this server's epoch), or hand out another one,
/// which a machine that holds the key already refuses (its ``DataKey/keyID`` differs) and a
/// joining machine cannot open with the passphrase it was given.
enum ServerKeys {
    /// The most bytes a wrapped key's row may hold as JSON; a larger one is refused unread.
    static let rowLimit = 4096

    /// The server's wrapped keys by kind; empty for a readable server.
    ///
    /// - Throws: ``SyncError/server(_:)``; ``SyncError/keys(_:)`` for a row that is not a wrapped key.
    static func read(_ connection: Connection) throws(SyncError) -> [WrappedKey.Kind: WrappedKey] {
        let result: ResultSet
        do {
            result = try connection.execute(
                """
                SELECT kind, CASE WHEN octet_length(wrapped::text) <= \(rowLimit) THEN wrapped::text END AS wrapped
                FROM notesfs_keys ORDER BY kind LIMIT 8
                """)
        } catch { throw .server(error) }
        var keys: [WrappedKey.Kind: WrappedKey] = [:]
        for row in result.rows.indices {
            guard let text = result.value(row, "wrapped"), let key = try? JSONDecoder().decode(WrappedKey.self, from: Data(text.utf8)),
                key.kind.rawValue == result.value(row, "kind")
            else {
                throw .keys(
                    "the server's wrapped key '\(String(result.value(row, "kind")?.prefix(40) ?? ""))' is damaged or not a notesfs key:"
                        + " nothing was synced")
            }
            keys[key.kind] = key
        }
        return keys
    }

    /// Makes `keys` the server's, in one transaction under the push lock, when the server holds
    /// neither keys nor records: returns false (writing nothing) when it does (another machine
    /// encrypted it first, or it holds readable notes).
    ///
    /// - Throws: ``SyncError/server(_:)``.
    static func create(_ keys: [WrappedKey], on connection: Connection) throws(SyncError) -> Bool {
        do {
            return try connection.transaction { () throws(PostgresError) -> Bool in
                try connection.execute("SELECT pg_advisory_xact_lock(\(ServerSchema.pushLock))")
                let used = try connection.execute(
                    "SELECT EXISTS (SELECT 1 FROM notesfs_keys) OR EXISTS (SELECT 1 FROM notesfs_records) AS used")
                guard used.value(0, "used") == "f" else { return false }
                for key in keys { try write(key, on: connection) }
                return true
            }
        } catch { throw .server(error) }
    }

    /// Replaces the server's wrapped key of `key.kind` (a new passphrase: the data key stays).
    ///
    /// - Throws: ``SyncError/server(_:)``.
    static func replace(_ key: WrappedKey, on connection: Connection) throws(SyncError) {
        do { try write(key, on: connection) } catch { throw .server(error) }
    }

    static func write(_ key: WrappedKey, on connection: Connection) throws(PostgresError) {
        let json = (try? JSONEncoder().encode(key)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        try connection.execute(
            """
            INSERT INTO notesfs_keys (kind, key_id, wrapped) VALUES ($1, $2, $3::jsonb)
            ON CONFLICT (kind) DO UPDATE SET key_id = EXCLUDED.key_id, wrapped = EXCLUDED.wrapped
            """, [key.kind.rawValue, key.keyID, json])
    }
}

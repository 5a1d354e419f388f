import Postgres

/// The server container's tables, created and migrated by `notesfs sync init`.
///
/// ```
/// notesfs_schema  (version)                       one row: the schema version
/// notesfs_records (record_name PK, record_type,   one row per record, tombstones kept (deleted)
///                  seq, deleted, payload jsonb,   seq: the server change sequence, also the
///                  origin)                        record's server change tag; origin: which
///                                                 client's which local version wrote it
/// notesfs_assets  (sha256 PK, size, data bytea)   asset contents, uploaded once, shared
/// notesfs_seq     sequence                        hands out seq, under the push lock
/// ```
enum ServerSchema {
    static let version = 1
    /// `pg_advisory_xact_lock` key that serialises pushes, so that seq order is commit order and a
    /// fetch since a seq never misses a transaction that committed late.
    static let pushLock = "7366504817"
    /// The `LISTEN`/`NOTIFY` channel a push announces its last seq on.
    static let channel = "notesfs_changes"

    /// Statements that take an empty database to version 1; later versions append steps.
    static let migrations: [Int: [String]] = [
        1: [
            """
            CREATE TABLE notesfs_records (
                record_name text PRIMARY KEY, record_type text NOT NULL, seq bigint NOT NULL,
                deleted boolean NOT NULL, payload jsonb, origin text NOT NULL)
            """,
            "CREATE INDEX notesfs_records_seq ON notesfs_records (seq)",
            "CREATE TABLE notesfs_assets (sha256 text PRIMARY KEY, size bigint NOT NULL, data bytea NOT NULL)",
            "CREATE SEQUENCE notesfs_seq",
        ]
    ]

    /// Creates or migrates the schema to ``version`` in one transaction.
    ///
    /// - Throws: ``SyncError/newerServerSchema(found:supported:)``, ``SyncError/server(_:)``.
    static func install(on connection: Connection) throws(SyncError) {
        do {
            try connection.transaction { () throws(PostgresError) in
                try connection.execute("SELECT pg_advisory_xact_lock(\(pushLock))")
                try connection.execute("CREATE TABLE IF NOT EXISTS notesfs_schema (version integer NOT NULL)")
                let found = try currentVersion(connection)
                guard found <= version else { return }
                for step in (found + 1)...max(found + 1, version) where step <= version {
                    for statement in migrations[step] ?? [] { try connection.execute(statement) }
                }
                try connection.execute("DELETE FROM notesfs_schema")
                try connection.execute("INSERT INTO notesfs_schema VALUES ($1)", [String(version)])
            }
        } catch {
            throw .server(error)
        }
        try check(connection)
    }

    /// Checks that the server holds a schema this notesfs can use.
    ///
    /// - Throws: ``SyncError/newerServerSchema(found:supported:)``, or ``SyncError/server(_:)``
    ///   (SQLSTATE 42P01 when `sync init` was never run against it).
    static func check(_ connection: Connection) throws(SyncError) {
        let found: Int
        do { found = try currentVersion(connection) } catch { throw .server(error) }
        guard found <= version else { throw .newerServerSchema(found: found, supported: version) }
        guard found == version else {
            throw .server(PostgresError(.client, "the server's schema is version \(found): run 'notesfs sync init URL' to migrate it"))
        }
    }

    private static func currentVersion(_ connection: Connection) throws(PostgresError) -> Int {
        let result = try connection.execute("SELECT max(version) AS version FROM notesfs_schema")
        return result.value(0, "version").flatMap { Int($0) } ?? 0
    }
}

import Postgres

/// The server container's tables, created and migrated by `notesfs sync init`.
///
/// ```
/// notesfs_schema  (version)                       one row: the schema version
/// notesfs_records (record_name PK, record_type,   one row per record, tombstones kept (deleted)
///                  seq, deleted, payload jsonb,   seq: the server change sequence, also the
///                  origin)                        record's server change tag; origin: which
///                                                 client's which local version wrote it
/// notesfs_assets  (sha256 PK, size)               an asset the server holds whole: written
///                                                 after its last chunk, so a row means complete
/// notesfs_asset_chunks (sha256, chunk, data)      its bytes, in chunks of assetChunkSize
///                  PK (sha256, chunk)             (chunk n holds bytes n*size ..< (n+1)*size)
/// notesfs_seq     sequence                        hands out seq, under the push lock
/// notesfs_server  (epoch)                         one row: this server's identity, made when
///                                                 `sync init` creates the schema; a reset or new
///                                                 server has another (``SyncEngine/checkIdentity(_:)``)
/// notesfs_clients (client_id PK, generation)      how many syncs each client started: a local
///                                                 state behind it is a copy of that client (a
///                                                 clone, a restored backup)
/// notesfs_pushes  (client_id, push_key,           the seqs a client's push transaction wrote,
///                  record_name, seq)              under its key (``PushIntent``): asked after a
///                  PK (client_id, push_key,       crash whether that push committed; a client's
///                      record_name)               next push deletes its older keys' rows
/// notesfs_keys    (kind PK, key_id, wrapped)      an encrypted server's data key, wrapped by the
///                                                 passphrase and by the recovery key (``ServerKeys``);
///                                                 no row: a readable server
/// ```
///
/// On an encrypted server (``RowCipher``) a `notesfs_records` row holds no readable value:
/// `record_name` is a keyed hash of the name, `record_type` is `sealed`, `deleted` is false,
/// `payload` is NULL, `origin` is a keyed hash of the origin, and `sealed` holds the AEAD of all
/// of them (tombstones too), bound to the row's name hash and seq. `notesfs_assets` and
/// `notesfs_asset_chunks` hold keyed hashes of the SHA-256 and sealed chunks.
enum ServerSchema {
    static let version = 5
    /// Bytes per row of `notesfs_asset_chunks` (the last chunk of an asset may be shorter).
    static let assetChunkSize = 1 << 20
    /// `pg_advisory_xact_lock` key that serialises pushes, so that seq order is commit order and a
    /// fetch since a seq never misses a transaction that committed late.
    static let pushLock = "7366504817"
    /// The `LISTEN`/`NOTIFY` channel a push announces its last seq on.
    static let channel = "notesfs_changes"

    /// The statements that take the schema from version n - 1 to version n, by n.
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
        ],
        // Assets in chunks, so that no asset is ever one value in memory (1 GB is bytea's limit).
        2: [
            """
            CREATE TABLE notesfs_asset_chunks (
                sha256 text NOT NULL, chunk integer NOT NULL, data bytea NOT NULL, PRIMARY KEY (sha256, chunk))
            """,
            // Out of line and uncompressed: most attachments are compressed already (images,
            // PDFs, archives); trying each chunk again made a 512 MB upload of random bytes take
            // 16.5 s instead of 7.4 s (debug build, one run).
            "ALTER TABLE notesfs_asset_chunks ALTER COLUMN data SET STORAGE EXTERNAL",
            """
            INSERT INTO notesfs_asset_chunks (sha256, chunk, data)
            SELECT sha256, n, substring(data FROM n * \(assetChunkSize) + 1 FOR \(assetChunkSize))
            FROM notesfs_assets, generate_series(0, (octet_length(data) - 1) / \(assetChunkSize)) AS n
            WHERE octet_length(data) > 0
            """,
            "ALTER TABLE notesfs_assets DROP COLUMN data",
        ],
        // Push keys, so that a client killed before it saved its state can tell its push committed.
        3: [
            """
            CREATE TABLE notesfs_pushes (
                client_id text NOT NULL, push_key text NOT NULL, record_name text NOT NULL, seq bigint NOT NULL,
                PRIMARY KEY (client_id, push_key, record_name))
            """
        ],
        // Identities: the server's epoch, each client's sync generation.
        4: [
            "CREATE TABLE IF NOT EXISTS notesfs_server (epoch text NOT NULL)",
            "INSERT INTO notesfs_server SELECT gen_random_uuid()::text WHERE NOT EXISTS (SELECT 1 FROM notesfs_server)",
            "CREATE TABLE IF NOT EXISTS notesfs_clients (client_id text PRIMARY KEY, generation bigint NOT NULL)",
        ],
        // End-to-end encryption: sealed rows, and the wrapped data key. A notesfs of schema 4
        // stops at a server of schema 5 (newerServerSchema) and pushes nothing.
        5: [
            "ALTER TABLE notesfs_records ADD COLUMN IF NOT EXISTS sealed bytea",
            // Ciphertext does not compress: stored out of line as it is.
            "ALTER TABLE notesfs_records ALTER COLUMN sealed SET STORAGE EXTERNAL",
            "CREATE TABLE IF NOT EXISTS notesfs_keys (kind text PRIMARY KEY, key_id text NOT NULL, wrapped jsonb NOT NULL)",
        ],
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
                for step in max(found, 0)..<version {
                    for statement in migrations[step + 1] ?? [] { try connection.execute(statement) }
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

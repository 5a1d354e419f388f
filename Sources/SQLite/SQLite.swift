import CSQLite
import Foundation

/// An SQLite failure: the result code, SQLite's message and what was being done.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The primary result code (`SQLITE_CORRUPT`, `SQLITE_FULL`, ...).
    public let code: Int32
    public let message: String

    public var description: String { message }

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// Whether the file is not a usable index (damaged, truncated, not a database): rebuild it.
    public var isDamage: Bool { code == SQLITE_CORRUPT || code == SQLITE_NOTADB || code == SQLITE_FORMAT }
    /// Whether the file is an index of another format (``TextIndex/formatVersion``): rebuilt, not damaged.
    public var isOtherFormat: Bool { code == SQLITE_FORMAT }
    /// Whether another process holds the lock past the busy timeout.
    public var isBusy: Bool { code == SQLITE_BUSY || code == SQLITE_LOCKED }
    /// Whether the disk (or the free-space floor) left no room for a write.
    public var isFull: Bool { code == SQLITE_FULL || code == SQLITE_IOERR }

    /// The index file is not there (or could not be opened) where it should be.
    public static func cannotOpen(_ message: String) -> SQLiteError { SQLiteError(code: SQLITE_CANTOPEN, message: message) }
}

/// One SQLite connection: the only code that calls `sqlite3_*` (with ``Statement``), for the
/// store's metadata index (RecordStore) and the derived text index (Index).
///
/// Not shared between threads: each user opens its own (SQLite is built thread-safe, but a
/// connection's statements and transactions belong to one caller at a time).
public final class SQLiteConnection {
    public private(set) var handle: OpaquePointer?
    public let path: String
    /// Compiled statements kept by their SQL (``cachedStatement(_:)``), finalized at ``close()``.
    private var cache: [String: OpaquePointer] = [:]

    /// Opens (`create`: or creates) the database at `path` (`sqlite3_open_v2`).
    ///
    /// - Throws: ``SQLiteError`` when the file cannot be opened.
    public init(path: String, create: Bool, readOnly: Bool = false) throws(SQLiteError) {
        _ = Self.withoutMemoryStatistics
        self.path = path
        var flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        flags |= SQLITE_OPEN_NOMUTEX
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        handle = db
        guard rc == SQLITE_OK else {
            let error = SQLiteError(
                code: rc & 0xff, message: "\(path): " + (db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"))
            sqlite3_close_v2(db)
            handle = nil
            throw error
        }
        // Another process (the mount, a CLI command) may hold the write lock for one batch.
        sqlite3_busy_timeout(db, 10_000)
    }

    deinit { close() }

    /// Whether SQLite's allocation counters are off: set once, before the process's first
    /// connection. Nothing here reads them, and they cost a process-wide mutex at every
    /// `sqlite3_malloc` and `sqlite3_free`, which the daemon's threads contended for.
    private static let withoutMemoryStatistics: Bool = csqlite_disable_memory_statistics() == SQLITE_OK

    /// The bytes SQLite's allocation counter holds (`sqlite3_memory_used`): 0 while the counters
    /// are off, as they are once a connection has opened.
    public static var countedMemory: Int64 { sqlite3_memory_used() }

    public func close() {
        for statement in cache.values { sqlite3_finalize(statement) }
        cache = [:]
        sqlite3_close_v2(handle)
        handle = nil
    }

    /// How many pages this connection read into its cache since the last call (misses: pages not
    /// there); with a cache that holds them all, emptied first, the distinct pages a query read: a
    /// measure of its work that no clock moves.
    public func takeCacheMisses() -> Int {
        var current: Int32 = 0
        var highest: Int32 = 0
        sqlite3_db_status(handle, SQLITE_DBSTATUS_CACHE_MISS, &current, &highest, 1)
        return Int(current)
    }

    /// Runs statements that return no rows (`sqlite3_exec`).
    ///
    /// - Throws: ``SQLiteError``.
    public func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard rc == SQLITE_OK else {
            throw SQLiteError(code: rc & 0xff, message: "\(path): " + (message.map { String(cString: $0) } ?? errorMessage))
        }
    }

    /// Compiles one statement (`sqlite3_prepare_v2`).
    ///
    /// - Throws: ``SQLiteError``.
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc) }
        return Statement(statement, connection: self)
    }

    /// ``prepare(_:)``, compiled once per connection and kept: for the few fixed statements a
    /// caller runs at every change (compiling them was 12% of a mount's CPU under renames, by
    /// `perf`). Only for SQL whose text is fixed in the source (the cache is never emptied
    /// before ``close()``), and the statement must be done with (its rows read) before the same
    /// SQL is asked for again.
    ///
    /// - Throws: ``SQLiteError``.
    public func cachedStatement(_ sql: String) throws(SQLiteError) -> Statement {
        if let found = cache[sql] { return Statement(found, connection: self, finalizes: false) }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc) }
        cache[sql] = statement
        return Statement(statement, connection: self, finalizes: false)
    }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE` for writers: the lock is taken at once, so
    /// what `body` reads is what it writes over); rolls back when it throws.
    ///
    /// - Throws: ``SQLiteError`` from the transaction or `body`.
    public func transaction<T>(write: Bool, _ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        // Inside a transaction already (a read that calls another read): part of it.
        if sqlite3_get_autocommit(handle) == 0 { return try body() }
        try execute(write ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    public var errorMessage: String { handle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed" }

    public func error(_ rc: Int32) -> SQLiteError { SQLiteError(code: rc & 0xff, message: "\(path): \(errorMessage)") }

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Closes without checkpointing the write-ahead log and keeps the log file
    /// (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`, `SQLITE_FCNTL_PERSIST_WAL`): a connection that only
    /// read costs no fsync and no file created and deleted; writers' transactions checkpoint the
    /// log as it grows (`wal_autocheckpoint`).
    ///
    /// - Throws: ``SQLiteError``.
    public func keepLogOnClose() throws(SQLiteError) {
        let rc = csqlite_keep_log_on_close(handle)
        guard rc == SQLITE_OK else { throw error(rc) }
    }

    /// Rows the last statement changed (`sqlite3_changes`).
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Whether no transaction is open (`sqlite3_get_autocommit`).
    public var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }
}

/// A compiled statement: bind, step, read columns. Finalized when released.
public final class Statement {
    private let statement: OpaquePointer
    private let connection: SQLiteConnection
    /// Whether releasing this value finalizes the statement (not for the connection's cached ones).
    private let finalizes: Bool

    public init(_ statement: OpaquePointer, connection: SQLiteConnection, finalizes: Bool = true) {
        self.statement = statement
        self.connection = connection
        self.finalizes = finalizes
    }

    deinit {
        if finalizes {
            sqlite3_finalize(statement)
        } else {
            sqlite3_reset(statement)  // a kept statement holds no read of the file between uses
        }
    }

    /// Binds `values` to parameters 1... after a reset (`sqlite3_bind_*`).
    ///
    /// - Throws: ``SQLiteError``.
    @discardableResult
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) -> Statement {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(statement, index)
            case .integer(let n): rc = sqlite3_bind_int64(statement, index, n)
            case .real(let x): rc = sqlite3_bind_double(statement, index, x)
            case .blob(let bytes):
                rc = bytes.withUnsafeBytes { raw in
                    guard let base = raw.baseAddress, !raw.isEmpty else { return csqlite_bind_empty_blob(statement, index) }
                    return csqlite_bind_blob(statement, index, base, Int32(clamping: raw.count))
                }
            case .text(let s):
                var s = s
                rc = s.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { chars in
                        guard let base = chars.baseAddress, !chars.isEmpty else { return csqlite_bind_empty_text(statement, index) }
                        return csqlite_bind_text(statement, index, base, Int32(clamping: chars.count))
                    }
                }
            }
            guard rc == SQLITE_OK else { throw connection.error(rc) }
        }
        return self
    }

    /// Advances to the next row: true when there is one (`sqlite3_step`).
    ///
    /// - Throws: ``SQLiteError``.
    public func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(statement)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw connection.error(rc)
    }

    /// Runs a statement that returns no rows.
    ///
    /// - Throws: ``SQLiteError``.
    public func run(_ values: [SQLiteValue] = []) throws(SQLiteError) {
        try bind(values)
        while try step() {}
    }

    /// Every row, each turned into a value by `row`.
    ///
    /// - Throws: ``SQLiteError``.
    public func rows<T>(_ values: [SQLiteValue] = [], _ row: (Statement) -> T) throws(SQLiteError) -> [T] {
        try bind(values)
        var result: [T] = []
        while try step() { result.append(row(self)) }
        return result
    }

    /// How many steps SQLite's virtual machine ran for this statement since the last call (the
    /// rows it looked at, whatever the plan): a measure of the work a query did that no clock moves.
    public func takeVirtualMachineSteps() -> Int { Int(sqlite3_stmt_status(statement, Int32(SQLITE_STMTSTATUS_VM_STEP), 1)) }

    public func int(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    /// A column's bytes as SQLite holds them (text unchecked: not repaired).
    public func bytes(_ column: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_text(statement, column) else { return [] }
        return Array(UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))))
    }
    public func double(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    /// A text column (invalid UTF-8 repaired, as SQLite returns bytes as they were stored).
    public func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}

/// A value bound to a statement parameter.
public enum SQLiteValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

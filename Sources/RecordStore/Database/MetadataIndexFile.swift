import Foundation
import SQLite

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The persistent metadata index, `indexes/records.sqlite`: every record's metadata (the line a
/// snapshot used to hold) as of one commit, with the tables that answer lookups without reading
/// the rest: by name, by identity, by reference target, by asset, by type, by small string value,
/// by commit, and the tombstones. A process reads the rows it needs, when it needs them; what
/// changed since (the journal's lines) is held in memory by ``RecordIndex`` over it.
///
/// Derived, never the truth: written only at a checkpoint (``write(_:)``), with the commit lock
/// held, in one SQLite transaction, just before the journal is started afresh; rebuilt from the
/// record files (or an old `index.jsonl` snapshot) when missing, damaged, of another format,
/// another database's, or behind the journal.
///
/// Each process reads through a read transaction it keeps open between checkpoints (``pin()``),
/// so that another process's checkpoint does not change what it reads until it has read the
/// journal lines before it: its view is always the file at one checkpoint plus its own lines.
///
/// Not thread-safe: used only under ``RecordDatabase/state``.
final class MetadataIndexFile {
    /// The layout of the tables; a file of another is rebuilt. 2: `refs` holds the referring
    /// row (`srow`), and `refs_target` covers a folder's listing.
    static let formatVersion: Int64 = 2

    struct Header: Equatable {
        var databaseID: String
        /// The last commit the file holds.
        var seq: UInt64
        var nextIdentity: UInt64
        var tombstoneHorizon: UInt64
        /// Rows in `records`.
        var count: Int
    }

    let path: String
    private let connection: SQLiteConnection
    private(set) var header: Header
    /// Statements compiled once, by SQL text.
    private var statements: [String: Statement] = [:]

    /// Whether this connection may write the file (not read-only, not built in memory).
    let canWrite: Bool

    /// Metadata decoded from the file, by record name, and record names by identity: the working
    /// set (a listed folder's entries, the nodes a mount stats and asks for attributes again and
    /// again) is read and decoded once per ``pin()``, not at every request. Only lookups by name
    /// and by reference fill it (not scans); emptied when the file's content may change (``pin()``;
    /// ``write(_:)`` forgets only the records it writes) and when it reaches ``cacheLimit`` entries:
    /// it holds a working set, not the file.
    private var cache: [String: RecordMetadata] = [:]
    private var identityCache: [UInt64: String] = [:]
    /// The last ``metadata(referringTo:key:)`` answer: a command lists a folder's records twice
    /// (`query 'folder == …'` finds them, then names them by listing the folder), and the second
    /// read ran the join again for every row, to find each in ``cache``. Emptied with the cache.
    private var lastReferrers: (target: String, key: String, found: [RecordMetadata])?
    static let cacheLimit = 16_384
    /// Rows decoded as metadata so far (what the cache saves is seen in it).
    private(set) var rowsDecoded = 0
    /// Steps SQLite ran for the metadata queries so far (``forEachRow(_:_:cached:missing:_:)``):
    /// what a query plan costs, counted (tests).
    private(set) var stepsRun = 0
    /// How many rows of metadata were read from the file (decoded or found in ``cache``): the
    /// work a lookup or a listing costs here.
    private(set) var rowsRead = 0

    private init(path: String, connection: SQLiteConnection, header: Header, canWrite: Bool) {
        self.path = path
        self.connection = connection
        self.header = header
        self.canWrite = canWrite
    }

    // MARK: Opening and building

    /// Opens the file at `path` and reads its header; nil (with the reason) when it is missing,
    /// not an index of this format, another database's, truncated or unreadable: then build it.
    /// A writable open that fails for want of room (a full disk: SQLite cannot make its shared
    /// memory file or log) is tried again read-only: reads still answer, checkpoints wait.
    static func open(path: String, databaseID: String, writable: Bool) -> (MetadataIndexFile?, reason: String?) {
        do {
            guard try Sys.fileStatus(path) != nil else { return (nil, nil) }
            // The file's own header: SQLite would take a log's copy of the first page for it.
            let fd = try Sys.open(path, O_RDONLY)
            defer { Sys.close(fd) }
            guard try Sys.pread(fd, count: 16, offset: 0, path: path) == Array("SQLite format 3\0".utf8) else {
                return (nil, "it is not an SQLite file")
            }
        } catch {
            return (nil, "it cannot be read (\(error))")
        }
        do {
            return try open(
                connection: SQLiteConnection(path: path, create: false, readOnly: !writable), databaseID: databaseID, writable: writable)
        } catch {
            guard writable, !error.isDamage, let connection = try? SQLiteConnection(path: path, create: false, readOnly: true) else {
                return (nil, "\(error)")
            }
            do {
                return try open(connection: connection, databaseID: databaseID, writable: false)
            } catch {
                return (nil, "\(error)")
            }
        }
    }

    private static func open(connection: SQLiteConnection, databaseID: String, writable: Bool) throws(SQLiteError) -> (
        MetadataIndexFile?, reason: String?
    ) {
        let path = connection.path
        try configure(connection, writable: writable)
        let header = try readHeader(connection)
        guard let header else { return (nil, "it is not a record index of format \(formatVersion)") }
        guard header.databaseID == databaseID else { return (nil, "it is another database's (\(header.databaseID))") }
        // A damaged page (a file cut short, garbled) is found when a read meets it: the file is
        // then rebuilt (``isDamaged``). Checking every page here would cost what the file is for.
        let file = MetadataIndexFile(path: path, connection: connection, header: header, canWrite: writable)
        try file.pin()
        return (file, nil)
    }

    private static func configure(_ connection: SQLiteConnection, writable: Bool) throws(SQLiteError) {
        // WAL: a process reading through its open transaction never blocks the checkpoint's writer.
        if writable {
            try connection.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL")
            try connection.keepLogOnClose()
        }
        // Pages are read with `pread` into SQLite's cache, not through a memory map: a map's page
        // faults bring in their neighbours too, so a listing of 1,000 records at 1,000,000 showed
        // 250 MB resident (the page cache's, but counted as the process's).
        try connection.execute("PRAGMA cache_size=-8000")
    }

    /// The header, or nil when the file holds no record index of this format.
    private static func readHeader(_ connection: SQLiteConnection) throws(SQLiteError) -> Header? {
        let hasMeta = try connection.prepare("SELECT count(*) FROM sqlite_master WHERE type='table' AND name='meta'").rows { $0.int(0) }
        guard hasMeta.first == 1 else { return nil }
        var values: [String: (Int64, String)] = [:]
        let rows = try connection.prepare("SELECT key, value, CAST(value AS TEXT) FROM meta").rows([]) {
            ($0.text(0), $0.int(1), $0.text(2))
        }
        for (key, number, text) in rows {
            values[key] = (number, text)
        }
        guard values["format"]?.0 == formatVersion, let id = values["databaseID"]?.1, let seq = values["seq"]?.0,
            let next = values["nextIdentity"]?.0, let horizon = values["tombstoneHorizon"]?.0, let count = values["count"]?.0,
            seq >= 0, horizon >= 0, count >= 0
        else { return nil }
        return Header(
            databaseID: id, seq: UInt64(seq), nextIdentity: UInt64(bitPattern: next), tombstoneHorizon: UInt64(horizon),
            count: Int(count))
    }

    /// Builds a new file at `path` holding `index` (its records and tombstones, at its seq): written
    /// to a temp file first and renamed into place, so that a crash leaves the old file or the
    /// new one. `path` nil: an index in memory (a read-only database). `progress` is called
    /// every 10,000 records with the count so far.
    static func build(
        path: String?, databaseID: String, from index: RecordIndex, temp: String, progress: ((Int) -> Void)? = nil
    ) throws(RecordStoreError) -> MetadataIndexFile {
        let target = path == nil ? ":memory:" : temp
        do {
            if path != nil {
                try? Sys.unlink(temp)
                try Sys.overwriteFile(temp, [])  // created 0600: SQLite keeps the mode of the file it finds
            }
            let connection = try SQLiteConnection(path: target, create: true)
            try connection.execute("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF")
            try createTables(connection)
            let file = MetadataIndexFile(
                path: target, connection: connection,
                header: Header(
                    databaseID: databaseID, seq: index.seq, nextIdentity: index.nextIdentity, tombstoneHorizon: index.tombstoneHorizon,
                    count: 0), canWrite: false)
            try connection.transaction(write: true) { () throws(SQLiteError) in
                var done = 0
                for metadata in Self.clustered(index.entries.values) {
                    try file.insert(metadata)
                    done += 1
                    if done % 10_000 == 0 { progress?(done) }
                }
                for tombstone in index.tombstones { try file.insert(tombstone) }
                file.header.count = done
                try file.writeHeader()
            }
            guard let path else {
                try file.pin()
                return file
            }
            try connection.execute("PRAGMA journal_mode=WAL")
            connection.close()
            let fd = try? Sys.open(temp, O_RDWR)
            if let fd {
                try? Sys.fsync(fd, path: temp)
                Sys.close(fd)
            }
            // A log left by the file this one replaces must not be replayed into it.
            for suffix in ["-wal", "-shm"] { try? Sys.unlink(path + suffix) }
            try Sys.rename(temp, path)
            try Sys.fsyncPath((path as NSString).deletingLastPathComponent, directory: true)
            let (opened, reason) = open(path: path, databaseID: databaseID, writable: true)
            guard let opened else { throw RecordStoreError.damagedRecord(nil, path: path, reason: reason ?? "missing after it was built") }
            return opened
        } catch let error as SQLiteError {
            if path != nil { try? Sys.unlink(temp) }
            throw storeError(error, path: path ?? ":memory:")
        } catch let error as RecordStoreError {
            if path != nil { try? Sys.unlink(temp) }
            throw error
        } catch {
            throw .damagedRecord(nil, path: path ?? ":memory:", reason: "\(error)")
        }
    }

    /// `records` in the order a build writes them: each folder's members together (by the target
    /// of the reference in their first key by name, a note's `folder`, a folder's `parent`; then by
    /// name), so that listing a folder reads the few pages its rows fill
    /// (``metadata(referringTo:key:)``), not a page a row. Commits after the build write each
    /// saved record at the end.
    static func clustered(_ records: some Collection<RecordMetadata>) -> [RecordMetadata] {
        var keyed: [(target: String, name: String, metadata: RecordMetadata)] = []
        keyed.reserveCapacity(records.count)
        for metadata in records {
            var first: (key: String, target: String)?
            metadata.forEachReference { key, reference in
                if let kept = first, kept.key <= key { return }
                first = (key, reference.recordID.recordName)
            }
            keyed.append((first?.target ?? "", metadata.recordID.recordName, metadata))
        }
        keyed.sort { ($0.target, $0.name) < ($1.target, $1.name) }
        return keyed.map(\.metadata)
    }

    /// An SQLite failure as the store reports it: a full disk as `ENOSPC`, the rest as damage.
    static func storeError(_ error: SQLiteError, path: String) -> RecordStoreError {
        if error.code == 13 { return .io(path: path, operation: "write", errno: ENOSPC) }  // SQLITE_FULL
        if error.code == 10 { return .io(path: path, operation: "write", errno: EIO) }  // SQLITE_IOERR
        return .damagedRecord(nil, path: path, reason: error.message)
    }

    private static func createTables(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute(
            """
            CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
            CREATE TABLE records(
                name TEXT PRIMARY KEY, type TEXT NOT NULL, identity INTEGER, seq INTEGER NOT NULL, refkeys TEXT NOT NULL,
                line BLOB NOT NULL);
            CREATE INDEX records_identity ON records(identity) WHERE identity IS NOT NULL;
            CREATE INDEX records_type ON records(type, refkeys);
            CREATE INDEX records_seq ON records(seq);
            CREATE TABLE refs(target TEXT NOT NULL, key TEXT NOT NULL, source TEXT NOT NULL, srow INTEGER NOT NULL);
            CREATE INDEX refs_target ON refs(target, key, srow, source);
            CREATE INDEX refs_key ON refs(key, target);
            CREATE INDEX refs_source ON refs(source);
            CREATE TABLE strings(type TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, norm TEXT NOT NULL, source TEXT NOT NULL);
            CREATE INDEX strings_norm ON strings(type, key, norm);
            CREATE INDEX strings_source ON strings(source);
            CREATE TABLE assets(sha TEXT NOT NULL, source TEXT NOT NULL);
            CREATE INDEX assets_sha ON assets(sha);
            CREATE INDEX assets_source ON assets(source);
            CREATE TABLE tombstones(seq INTEGER NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL);
            CREATE INDEX tombstones_seq ON tombstones(seq);
            """)
    }

    // MARK: Reading

    /// Starts a new read transaction: from now on this process reads the file as it is now (until
    /// the next call). Called at open and whenever the journal was started afresh.
    ///
    /// `forgetting`: the only records whose rows may differ from what was decoded before (this
    /// process's own write); nil: any may, and everything decoded is forgotten.
    ///
    /// `copyingLog` false: the log is left for another connection to copy into the file (a
    /// background checkpoint's, after its locks are given back: ``truncateLog()``).
    func pin(forgetting changed: Set<String>? = nil, copyingLog: Bool = true) throws(SQLiteError) {
        lastReferrers = nil
        if let changed {
            for name in changed { cache[name] = nil }
            identityCache = [:]  // an identity may have moved to another record (a rename over one)
        } else {
            forgetCached()
        }
        if sqlite3InTransaction { try connection.execute("COMMIT") }
        // While no transaction of this process holds the log, its pages go into the file as far
        // as other readers allow, and with no other reader the log is emptied: SQLite's index of
        // the log lives in shared memory, rebuilt by reading the whole log whenever no process
        // has it open, so a log left long would cost every command that read (and a copy).
        if canWrite && copyingLog { truncateLog() }
        try connection.execute("BEGIN")
        guard let header = try Self.readHeader(connection), header.databaseID == self.header.databaseID else {
            throw SQLiteError(code: 11, message: "\(path): the record index was replaced by one of another database or format")
        }
        self.header = header
    }

    private var sqlite3InTransaction: Bool { !connection.isAutocommit }

    private func statement(_ sql: String) throws(SQLiteError) -> Statement {
        if let found = statements[sql] { return found }
        let compiled = try connection.prepare(sql)
        statements[sql] = compiled
        return compiled
    }

    /// The rows of `sql` with `values` bound, as ``forEachRow(_:_:cached:_:)`` decodes them.
    private func metadataRows(_ sql: String, _ values: [SQLiteValue], cached: Bool = false) -> [RecordMetadata] {
        var found: [RecordMetadata] = []
        forEachRow(sql, values, cached: cached) { found.append($0) }
        return found
    }

    /// Calls `body` with each row of `sql` decoded as metadata from column 0 (a row that does not
    /// decode is reported through ``isDamaged`` and skipped). `cached`: `sql` selects the record's
    /// name in column 1, and rows are taken from and kept in ``cache`` by it. `missing`: called with
    /// the name of a row whose column 0 is NULL (an outer join that found no row), not decoded.
    private func forEachRow(
        _ sql: String, _ values: [SQLiteValue], cached: Bool = false, missing: ((String) -> Void)? = nil,
        _ body: (RecordMetadata) -> Void
    ) {
        do {
            let statement = try statement(sql)
            try statement.bind(values)
            while try statement.step() {
                rowsRead += 1
                let name = cached ? statement.text(1) : nil
                if let name, let known = cache[name] {
                    body(known)
                    continue
                }
                if let name, let missing, statement.isNull(0) {
                    missing(name)
                    continue
                }
                rowsDecoded += 1
                guard let metadata = try? RecordCoding.decodeMetadata(Data(statement.bytes(0))) else {
                    failures.append("\(path): a row does not decode as record metadata")
                    isDamaged = true
                    continue
                }
                if let name {
                    if cache.count >= Self.cacheLimit { cache = [:] }
                    cache[name] = metadata
                }
                body(metadata)
            }
            stepsRun += statement.takeVirtualMachineSteps()
            try statement.bind([])
        } catch {
            failed(error)
        }
    }

    private func forgetCached() {
        lastReferrers = nil
        cache = [:]
        identityCache = [:]
    }

    private func names(_ sql: String, _ values: [SQLiteValue]) -> [String] {
        do {
            let statement = try statement(sql)
            let found = try statement.rows(values) { $0.text(0) }
            try statement.bind([])
            return found
        } catch {
            failed(error)
            return []
        }
    }

    /// Read failures since the owner last took them (``takeFailures()``).
    private var failures: [String] = [] {
        didSet { if failures.count > 100 { failures.removeFirst(50) } }
    }
    /// Whether a read found the file damaged (a page missing or garbled: SQLite finds out only on
    /// reading it): the owner rebuilds it (``RecordDatabase/rebuildDamagedIndex(_:)``).
    private(set) var isDamaged = false

    private func failed(_ error: SQLiteError) {
        failures.append("\(path): \(error)")
        if error.isDamage { isDamaged = true }
    }

    func takeFailures() -> [String] {
        defer { failures = [] }
        return failures
    }

    func metadata(named name: String) -> RecordMetadata? {
        if let known = cache[name] { return known }
        return metadataRows("SELECT line, name FROM records WHERE name = ?1", [.text(name)], cached: true).first
    }

    func contains(_ name: String) -> Bool {
        !names("SELECT name FROM records WHERE name = ?1", [.text(name)]).isEmpty
    }

    func name(identity: UInt64) -> String? {
        if let known = identityCache[identity] { return known }
        let name = names("SELECT name FROM records WHERE identity = ?1", [.integer(Int64(bitPattern: identity))]).first
        if let name {
            if identityCache.count >= Self.cacheLimit { identityCache = [:] }
            identityCache[identity] = name
        }
        return name
    }

    /// Names of the records referencing `target` through `key`.
    func referrers(to target: String, key: String) -> [String] {
        names("SELECT source FROM refs WHERE target = ?1 AND key = ?2", [.text(target), .text(key)])
    }

    /// Metadata of the records referencing `target` through `key` (one query, not one per record).
    ///
    /// Each record's row is found by its row number (`srow`) from `refs_target` alone, not by its
    /// name through a second index: a folder's 1,000 notes cost the pages their rows are on
    /// (together, when they were written together) instead of a lookup each in the names' index
    /// (1,000 pages at 1,000,000 records). A reference whose row number is not its record's (a
    /// damaged file) has its record looked up by name, and the file is rebuilt (``isDamaged``).
    func metadata(referringTo target: String, key: String) -> [RecordMetadata] {
        if let last = lastReferrers, last.target == target, last.key == key { return last.found }
        var found: [RecordMetadata] = []
        var unmatched: [String] = []
        forEachRow(
            """
            SELECT r.line, f.source FROM refs f INDEXED BY refs_target LEFT JOIN records r ON r.rowid = f.srow AND r.name = f.source
            WHERE f.target = ?1 AND f.key = ?2
            """,
            [.text(target), .text(key)], cached: true, missing: { unmatched.append($0) }
        ) { found.append($0) }
        guard !unmatched.isEmpty else {
            lastReferrers = (target, key, found)
            return found
        }
        failures.append("\(path): \(unmatched.count) references to \(target) name another record's row")
        isDamaged = true
        return found + unmatched.compactMap { metadata(named: $0) }
    }

    /// What is wrong with the references table, read whole (fsck): nil when each reference names
    /// its record's row; otherwise the file is marked damaged (``isDamaged``), to be rebuilt.
    func auditReferences() -> String? {
        let strays = count(
            "SELECT count(*) FROM refs f WHERE NOT EXISTS (SELECT 1 FROM records r WHERE r.rowid = f.srow AND r.name = f.source)", [])
        guard strays > 0 else { return nil }
        isDamaged = true
        return "\(strays) references name a row that is not their record's"
    }

    /// (key, name) of every record referencing `target`.
    func referrers(to target: String) -> [(key: String, name: String)] {
        do {
            let statement = try statement("SELECT key, source FROM refs WHERE target = ?1")
            let found = try statement.rows([.text(target)]) { (key: $0.text(0), name: $0.text(1)) }
            try statement.bind([])
            return found
        } catch {
            failed(error)
            return []
        }
    }

    /// Every target some record references through `key`, each once: one seek of the index per
    /// target (not a scan of the references).
    func targets(key: String) -> [String] {
        distinct("target", in: "refs", where: "key", is: key)
    }

    /// The distinct values of `column` in the rows of `table` whose `filter` column is `value`,
    /// each found by seeking the next one after the last: a skip scan of an index on
    /// (`filter`, `column`), one seek per value rather than a read of every row.
    private func distinct(_ column: String, in table: String, where filter: String, is value: String) -> [String] {
        let first = "SELECT \(column) FROM \(table) WHERE \(filter) = ?1 ORDER BY \(column) LIMIT 1"
        let next = "SELECT \(column) FROM \(table) WHERE \(filter) = ?1 AND \(column) > ?2 ORDER BY \(column) LIMIT 1"
        var found: [String] = []
        while let last = names(found.isEmpty ? first : next, [.text(value)] + found.suffix(1).map(SQLiteValue.text)).first {
            found.append(last)
        }
        return found
    }

    /// Records of `recordType` that hold no reference in field `key`: one seek per distinct set of
    /// reference keys the type's records hold, then the rows of the sets without `key`.
    func metadata(ofType recordType: String, withoutReferenceIn key: String) -> [RecordMetadata] {
        let sets = distinct("refkeys", in: "records", where: "type", is: recordType)
        var found: [RecordMetadata] = []
        for set in sets where !set.contains("," + key + ",") {
            found += metadataRows("SELECT line FROM records WHERE type = ?1 AND refkeys = ?2", [.text(recordType), .text(set)])
        }
        return found
    }

    /// Names of the records using the asset `sha256`.
    func users(ofAsset sha256: String) -> [String] {
        names("SELECT source FROM assets WHERE sha = ?1", [.text(sha256)])
    }

    /// Calls `body` with the metadata of each record of `recordType`, one row at a time.
    func forEachRecord(ofType recordType: String, _ body: (RecordMetadata) -> Void) {
        forEachRow("SELECT line FROM records WHERE type = ?1", [.text(recordType)], body)
    }

    /// Names of the records of `recordType` (no row decoded).
    func names(ofType recordType: String) -> [String] {
        names("SELECT name FROM records WHERE type = ?1", [.text(recordType)])
    }

    /// Records of `recordType` whose small string field `key` is `value` as Swift compares
    /// strings (canonical equivalence: the table is searched by the values' NFC form).
    func metadata(ofType recordType: String, whereField key: String, equals value: String) -> [RecordMetadata] {
        metadataRows(
            "SELECT r.line FROM strings s JOIN records r ON r.name = s.source WHERE s.type = ?1 AND s.key = ?2 AND s.norm = ?3",
            [.text(recordType), .text(key), .text(Self.normalized(value))])
    }

    /// Records of `recordType` whose small string field `key` is `value` (as
    /// ``metadata(ofType:whereField:equals:)`` compares) and that reference `target` through
    /// `referenceKey`: one joined query, driven from whichever side holds fewer rows (the records
    /// referencing `target`, or those holding `value`, each counted up to ``joinProbeLimit``), so
    /// that it reads neither all the records holding the value (20,000 folders named `d`, one in
    /// each) nor all those referencing the target (a folder of 1,000 notes).
    func metadata(
        ofType recordType: String, whereField key: String, equals value: String, referringTo target: String, through referenceKey: String
    )
        -> [RecordMetadata]
    {
        let values: [SQLiteValue] = [.text(recordType), .text(key), .text(Self.normalized(value)), .text(referenceKey), .text(target)]
        let limit = Self.joinProbeLimit
        let holding = count(
            "SELECT count(*) FROM (SELECT 1 FROM strings WHERE type = ?1 AND key = ?2 AND norm = ?3 LIMIT \(limit))", Array(values[..<3]))
        guard holding > 0 else { return [] }
        // A few holders (a title, a name: the usual case) are the smaller side whatever the
        // target holds, and the referring side is not counted (a folder of 1,000 notes).
        let referring =
            holding <= Self.fewHolders
            ? limit
            : count("SELECT count(*) FROM (SELECT 1 FROM refs WHERE key = ?1 AND target = ?2 LIMIT \(limit))", Array(values[3...]))
        guard referring > 0 else { return [] }
        // CROSS JOIN keeps the order written: the left table is the outer loop. Each holder's
        // references are found by its name (`refs_source`): left to itself, SQLite takes the
        // covering `refs_target` and reads every reference to the folder for each holder (a
        // folder of 1,250 notes made the text indexer's namesake lookups 35% of its time).
        let from =
            referring <= holding
            ? "refs f CROSS JOIN strings s INDEXED BY strings_source ON s.source = f.source"
            : "strings s CROSS JOIN refs f INDEXED BY refs_source ON f.source = s.source"
        return metadataRows(
            """
            SELECT r.line, r.name FROM \(from) CROSS JOIN records r ON r.name = s.source
            WHERE s.type = ?1 AND s.key = ?2 AND s.norm = ?3 AND f.key = ?4 AND f.target = ?5
            """, values, cached: true)
    }

    /// How far ``metadata(ofType:whereField:equals:referringTo:through:)`` counts each side.
    static let joinProbeLimit = 256
    /// Up to how many records holding the value that query drives from them without counting the other side.
    static let fewHolders = 16

    /// The integer in the first column of `sql`'s first row (0 on failure, which is recorded).
    private func count(_ sql: String, _ values: [SQLiteValue]) -> Int {
        do {
            let statement = try statement(sql)
            let found = try statement.rows(values) { $0.int(0) }
            try statement.bind([])
            return Int(found.first ?? 0)
        } catch {
            failed(error)
            return 0
        }
    }

    /// Records of `recordType` whose small string field `key` is `value` and that hold no
    /// reference in field `referenceKey` (the root's records of one name, say).
    func metadata(ofType recordType: String, whereField key: String, equals value: String, withoutReferenceIn referenceKey: String)
        -> [RecordMetadata]
    {
        metadataRows(
            """
            SELECT r.line, r.name FROM strings s JOIN records r ON r.name = s.source
            WHERE s.type = ?1 AND s.key = ?2 AND s.norm = ?3 AND instr(r.refkeys, ?4) = 0
            """,
            [.text(recordType), .text(key), .text(Self.normalized(value)), .text("," + referenceKey + ",")], cached: true)
    }

    /// `value` in NFC (``Swift/String/canonicallyComposed``).
    static func normalized(_ value: String) -> String { value.canonicallyComposed }

    /// Distinct values of the small string field `key` of records of `recordType`.
    func values(ofField key: String, ofType recordType: String) -> [String] {
        names("SELECT DISTINCT value FROM strings WHERE type = ?1 AND key = ?2", [.text(recordType), .text(key)])
    }

    /// Records saved by a commit after `seq`.
    func metadata(changedAfter seq: UInt64) -> [RecordMetadata] {
        metadataRows("SELECT line FROM records WHERE seq > ?1 ORDER BY seq", [.integer(Int64(clamping: seq))])
    }

    /// Tombstones of commits after `seq`, oldest first.
    func tombstones(after seq: UInt64) -> [Tombstone] {
        do {
            let statement = try statement("SELECT seq, name, type FROM tombstones WHERE seq > ?1 ORDER BY seq")
            let found = try statement.rows([.integer(Int64(clamping: seq))]) {
                Tombstone(seq: UInt64(clamping: $0.int(0)), recordID: RecordID(recordName: $0.text(1)), recordType: $0.text(2))
            }
            try statement.bind([])
            return found
        } catch {
            failed(error)
            return []
        }
    }

    /// Calls `body` with every record's metadata (a scan of the whole file).
    func forEachRecord(_ body: (RecordMetadata) -> Void) {
        forEachRow("SELECT line FROM records", [], body)
    }

    // MARK: Writing

    /// Writes what changed since the file's commit (``header``'s seq) up to `index`'s: its saved
    /// records, the names it deleted, its tombstones, its counters, in one transaction (with
    /// `synchronous=FULL`: durable when it returns). Refused (false) when the file is already
    /// at or past `index.seq` (another process's checkpoint came first). Starts a new read
    /// transaction after it.
    ///
    /// What it decoded before stays decoded, but for the records it writes: a checkpoint after each
    /// commit emptied the cache, and every request after it decoded its node again (an append's
    /// `open`, an unlink's checks). All of it is forgotten when another process wrote the file since
    /// this one last read it, or came first.
    func write(_ index: RecordIndex) throws(RecordStoreError) -> Bool {
        do {
            let rows = Rows(index)
            let outcome = try writeRows(rows, over: header.seq)
            try pin(forgetting: outcome.written && outcome.onlyOurs ? rows.changedNames : nil)  // which empties the log too
            return outcome.written
        } catch {
            try? pin()
            throw Self.storeError(error, path: path)
        }
    }

    /// A background checkpoint's write (``RecordDatabase/startCheckpoint(_:)``), through a
    /// connection of its own: `rows` were copied from the store's index, and hold what changed
    /// since the file's commit `readAt`. As ``write(_:)``, but no read transaction is started
    /// after it (the connection is closed next). `onlyOurs`: no other process wrote the file
    /// since `readAt`, so the rows of every record `rows` do not name are as they were.
    func writeCheckpoint(_ rows: Rows, over readAt: UInt64) throws(RecordStoreError) -> (written: Bool, onlyOurs: Bool) {
        do {
            return try writeRows(rows, over: readAt)
        } catch {
            throw Self.storeError(error, path: path)
        }
    }

    /// The commit the file holds as another connection would read it now (this one holds no
    /// read transaction: after ``writeCheckpoint(_:over:)``).
    func committedSeq() throws(RecordStoreError) -> UInt64? {
        do {
            return try Self.readHeader(connection)?.seq
        } catch {
            throw Self.storeError(error, path: path)
        }
    }

    /// What a checkpoint writes: an index's changes since its base, copied out of it (the
    /// overlay's arrays are shared until the index changes them), for another thread to write
    /// (``writeCheckpoint(_:over:)``) while the index goes on.
    struct Rows: Sendable {
        let seq: UInt64
        let nextIdentity: UInt64
        let tombstoneHorizon: UInt64
        /// Records saved since the base's commit.
        let saved: [RecordMetadata]
        /// Names of base records saved again or deleted since.
        let shadowedInBase: Set<String>
        /// Names of base records deleted since (and not saved again).
        let deleted: [String]
        let tombstones: [Tombstone]

        init(_ index: RecordIndex) {
            seq = index.seq
            nextIdentity = index.nextIdentity
            tombstoneHorizon = index.tombstoneHorizon
            saved = index.entries.overlay
            shadowedInBase = index.entries.shadowedInBase
            deleted = index.entries.namesDeletedFromBase
            tombstones = index.tombstones
        }

        /// The names whose rows the write changes.
        var changedNames: Set<String> {
            var changed = Set(deleted)
            for position in saved.indices { changed.insert(saved[position].recordID.recordName) }
            return changed
        }
    }

    /// The transaction of ``write(_:)`` and ``writeCheckpoint(_:over:)``. `onlyOurs`: the file was
    /// still at `readAt` (the commit the rows' changes are over).
    private func writeRows(_ index: Rows, over readAt: UInt64) throws(SQLiteError) -> (written: Bool, onlyOurs: Bool) {
        var onlyOurs = false
        if sqlite3InTransaction { try connection.execute("COMMIT") }
        let written = try connection.transaction(write: true) { () throws(SQLiteError) -> Bool in
            guard let current = try Self.readHeader(connection), current.databaseID == header.databaseID else {
                throw SQLiteError(code: 11, message: "\(path): the record index was replaced while open")
            }
            onlyOurs = current.seq == readAt
            header = current
            guard current.seq < index.seq else { return false }
            var count = current.count
            for name in index.deleted {
                if try delete(name) { count -= 1 }
            }
            for metadata in index.saved {
                // A record the file did not hold at `readAt` has no rows to delete, unless
                // another process's checkpoint wrote it since (four lookups a new record saved).
                let name = metadata.recordID.recordName
                if !onlyOurs || index.shadowedInBase.contains(name), try delete(name) { count -= 1 }
                try insert(metadata)
                count += 1
            }
            for tombstone in index.tombstones { try insert(tombstone) }
            header.seq = index.seq
            header.nextIdentity = max(header.nextIdentity, index.nextIdentity)
            header.tombstoneHorizon = max(header.tombstoneHorizon, index.tombstoneHorizon)
            header.count = count
            try dropOldTombstones()
            try writeHeader()
            return true
        }
        return (written, onlyOurs)
    }

    /// Copies the log into the file and empties it, unless a reader (another process between two
    /// of its reads) still needs it: then it stays for the next checkpoint. Each process's first
    /// connection reads the whole log to rebuild SQLite's index of it, so a log left at tens of
    /// megabytes would cost every command that.
    func truncateLog() {
        try? connection.execute("PRAGMA busy_timeout=0")
        _ = try? connection.prepare("PRAGMA wal_checkpoint(TRUNCATE)").rows([]) { $0.int(0) }
        try? connection.execute("PRAGMA busy_timeout=10000")
    }

    /// Keeps the newest ``RecordIndex/tombstoneLimit`` tombstones; the horizon moves past the rest.
    private func dropOldTombstones() throws(SQLiteError) {
        let count = try statement("SELECT count(*) FROM tombstones").rows { $0.int(0) }.first ?? 0
        guard count > RecordIndex.tombstoneLimit else { return }
        let drop = count - Int64(RecordIndex.tombstoneLimit / 2)
        let horizon = try statement("SELECT seq FROM tombstones ORDER BY seq LIMIT 1 OFFSET ?1").rows([.integer(drop - 1)]) { $0.int(0) }
        guard let horizon = horizon.first else { return }
        try statement("DELETE FROM tombstones WHERE seq <= ?1").run([.integer(horizon)])
        header.tombstoneHorizon = max(header.tombstoneHorizon, UInt64(clamping: horizon))
    }

    private func writeHeader() throws(SQLiteError) {
        let put = try statement("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)")
        try put.run([.text("format"), .integer(Self.formatVersion)])
        try put.run([.text("databaseID"), .text(header.databaseID)])
        try put.run([.text("seq"), .integer(Int64(clamping: header.seq))])
        try put.run([.text("nextIdentity"), .integer(Int64(bitPattern: header.nextIdentity))])
        try put.run([.text("tombstoneHorizon"), .integer(Int64(clamping: header.tombstoneHorizon))])
        try put.run([.text("count"), .integer(Int64(header.count))])
    }

    /// Removes a record's rows; whether it was there.
    private func delete(_ name: String) throws(SQLiteError) -> Bool {
        let key: [SQLiteValue] = [.text(name)]
        try statement("DELETE FROM refs WHERE source = ?1").run(key)
        try statement("DELETE FROM strings WHERE source = ?1").run(key)
        try statement("DELETE FROM assets WHERE source = ?1").run(key)
        try statement("DELETE FROM records WHERE name = ?1").run(key)
        return connection.changes > 0
    }

    private func insert(_ metadata: RecordMetadata) throws(SQLiteError) {
        let name = metadata.recordID.recordName
        var w = JSONWriter(capacity: 512)
        metadata.write(into: &w)
        let identity: SQLiteValue = metadata.storedIdentity.map { .integer(Int64(bitPattern: $0)) } ?? .null
        var referenceKeys = Set<String>()
        metadata.forEachReference { key, _ in referenceKeys.insert(key) }
        let refkeys = referenceKeys.isEmpty ? "" : "," + referenceKeys.sorted().joined(separator: ",") + ","
        try statement("INSERT INTO records(name, type, identity, seq, refkeys, line) VALUES (?1, ?2, ?3, ?4, ?5, ?6)").run([
            .text(name), .text(metadata.recordType), identity, .integer(Int64(clamping: metadata.seq)), .text(refkeys), .blob(w.bytes),
        ])
        let row = SQLiteValue.integer(connection.lastInsertRowID)
        let addReference = try statement("INSERT INTO refs(target, key, source, srow) VALUES (?1, ?2, ?3, ?4)")
        var failure: SQLiteError?
        metadata.forEachReference { key, reference in
            do throws(SQLiteError) { try addReference.run([.text(reference.recordID.recordName), .text(key), .text(name), row]) } catch {
                failure = error
            }
        }
        let addString = try statement("INSERT INTO strings(type, key, value, norm, source) VALUES (?1, ?2, ?3, ?4, ?5)")
        metadata.forEachSmallString { key, value in
            do throws(SQLiteError) {
                try addString.run([.text(metadata.recordType), .text(key), .text(value), .text(Self.normalized(value)), .text(name)])
            } catch { failure = error }
        }
        let addAsset = try statement("INSERT INTO assets(sha, source) VALUES (?1, ?2)")
        metadata.forEachAsset { asset in
            do throws(SQLiteError) { try addAsset.run([.text(asset.sha256), .text(name)]) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    private func insert(_ tombstone: Tombstone) throws(SQLiteError) {
        try statement("INSERT INTO tombstones(seq, name, type) VALUES (?1, ?2, ?3)").run([
            .integer(Int64(clamping: tombstone.seq)), .text(tombstone.recordID.recordName), .text(tombstone.recordType),
        ])
    }
}

import CSQLite
import Foundation
import RecordStore
import SQLite

/// The full-text index of one database: a derived SQLite file beside the records, never synced.
///
/// ```
/// <db>/indexes/text.sqlite (+ -wal, -shm)
///   meta(key, value)            format, the change token it holds every commit up to
///   docs(id, name, type, folder, file_name, name_key, modified, unreadable)   one row per indexed record
///                               (name_key: the link lookup key of file_name, LinkResolver.key)
///   folders(name, path)         every folder's path as the mount shows it
///   links(doc, key, target, style, line)   every link of a note as written (key: its last
///                               component's lookup key; style 0 wiki, 1 markdown), for backlinks
///   tags(doc, tag, folded)      every tag of a note (folded: lowercased, for counts and lookups)
///   props(doc, key, kind, text, number)    front-matter properties (key lowercased; a list has
///                               one row per item, kind 'list'; dates are numbers: seconds since 2001)
///   words   FTS5 unicode61 remove_diacritics 2: title, body, cjk   (search: ranks, snippets;
///           cjk: CJKText.indexForm of title and body, so CJK text is found by substring)
///   grams   FTS5 trigram, contentless, detail=none: body in Predicate.substringForm (query CONTAINS)
///   titles  FTS5 unicode61 remove_diacritics 2, contentless: title, cjk (always empty)   (the
///           title matches a common query ranks: `words`' title column alone cannot be walked)
/// ```
///
/// Losing the file costs time only: it is rebuilt from the records when missing, damaged, of
/// another format or of another database. Any number of processes may open it; SQLite's locks
/// serialise writers (WAL: readers never wait), and each writer reads the token inside its
/// write transaction, so two indexers never apply one change twice or skip one.
///
/// An instance is used by one thread at a time (its connection and statements are not shared);
/// the owner guards it.
///
/// `@unchecked Sendable`: it may move between threads, but the connection (opened in SQLite's
/// multi-thread mode) must never be used by two at once; every owner keeps it behind one lock
/// (`NotesSearchIndex`'s `writer` and `reader` mutexes) or on one thread (a CLI command).
public final class TextIndex: @unchecked Sendable {
    /// Bumped whenever the schema or what is stored changes: an index of another format is rebuilt.
    public static let formatVersion = 4

    public let path: String
    let connection: SQLiteConnection
    /// The device and inode of the file when it was opened (nil: a temporary index).
    private let identity: (device: UInt64, inode: UInt64)?

    /// The file of the index of the database at `databasePath`.
    public static func path(forDatabaseAt databasePath: String) -> String { databasePath + "/indexes/text.sqlite" }

    /// Opens the index of the database at `databasePath`; creates an empty one when `create` and absent.
    ///
    /// - Throws: ``SQLiteError`` when the file cannot be opened or is not an index of this
    ///   format (``SQLiteError/isDamage``: ``discard(databasePath:)`` it and build again), or
    ///   when it is absent and `create` is false (`SQLITE_CANTOPEN`).
    public convenience init(databasePath: String, create: Bool) throws(SQLiteError) {
        let file = Self.path(forDatabaseAt: databasePath)
        if create {
            try Self.makeDirectory(databasePath + "/indexes")
            // Owner only, as every file of a database: SQLite gives its -wal and -shm the same mode.
            let fd = open(file, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if fd >= 0 { Glibc.close(fd) }
        }
        try self.init(file: file, create: create)
    }

    /// A private index in a temporary file SQLite removes at close: a scan's, when the database's
    /// own index cannot be written (a read-only database, a full disk).
    ///
    /// - Throws: ``SQLiteError``.
    public static func temporary() throws(SQLiteError) -> TextIndex { try TextIndex(file: "", create: true) }

    private init(file: String, create: Bool) throws(SQLiteError) {
        path = file
        connection = try SQLiteConnection(path: path, create: create)
        var st = stat()
        identity = !file.isEmpty && stat(file, &st) == 0 ? (UInt64(st.st_dev), UInt64(st.st_ino)) : nil
        do throws(SQLiteError) {
            // A checkpoint truncates the -wal file to 4 MiB: a big batch does not keep its space.
            try connection.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA journal_size_limit=4194304")
            try EstimatedBM25.register(on: connection)
            let tables = try connection.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'meta'").rows { $0.int(0) }
            if tables.first == 0 {
                guard create else { throw SQLiteError(code: SQLITE_CANTOPEN, message: "\(path): not built yet") }
                try createSchema()
            }
            if try meta("format") == "3" { try upgradeFromFormat3() }
            guard try meta("format") == String(Self.formatVersion) else {
                throw SQLiteError(code: SQLITE_FORMAT, message: "\(path): index of another format")
            }
            // Added to an index made without them (paths to documents came later), or left by a
            // build that was killed; not while a build is under way, which makes them at its end. A
            // connection that cannot write goes on without.
            if try meta("building") == nil { try? connection.execute(Self.createLookupIndexes) }
        } catch {
            connection.close()
            throw error
        }
    }

    public func close() { connection.close() }

    /// Whether the file at ``path`` is no longer the one this connection opened (another process
    /// removed or rebuilt it: `reindex`, a repair): reopen to see the index that is there now.
    public var isReplaced: Bool {
        guard let identity else { return false }
        var st = stat()
        guard stat(path, &st) == 0 else { return true }
        return UInt64(st.st_dev) != identity.device || UInt64(st.st_ino) != identity.inode
    }

    /// Removes the index files of the database at `databasePath` (a damaged or outdated index).
    public static func discard(databasePath: String) {
        let file = path(forDatabaseAt: databasePath)
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(file + suffix) }
    }

    private static func makeDirectory(_ path: String) throws(SQLiteError) {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw SQLiteError(code: SQLITE_CANTOPEN, message: "\(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The indexes that find documents by a key other than their row: by folder, link key, file
    /// path (a rename's link planning looks up every link's target by folder and file name), date,
    /// tag, property. A build drops them first and makes them at its end (``IndexWriter/removeAll()``):
    /// it inserts by record name, so their keys come in random order, and at 1,000,000 notes each
    /// transaction of 10,000 documents dirtied most of their pages; a `CREATE INDEX` sorts instead.
    /// The build's own lookups go by record name (`docs.name`, kept) and row.
    static let lookupIndexes: [(name: String, on: String)] = [
        ("docs_folder", "docs(folder)"), ("docs_name_key", "docs(name_key)"), ("docs_file", "docs(folder, file_name)"),
        ("docs_modified", "docs(modified)"), ("links_key", "links(key)"), ("tags_folded", "tags(folded)"),
        ("props_text", "props(key, text)"), ("props_number", "props(key, number)"), ("folders_path", "folders(path)"),
    ]

    /// The statements that make the ``lookupIndexes`` that are not there.
    static let createLookupIndexes = lookupIndexes.map { "CREATE INDEX IF NOT EXISTS \($0.name) ON \($0.on);" }.joined(separator: "\n")

    /// The table of titles alone (format 4): a column filter of `words` (`title : word`) walks
    /// every row holding the word, title or not (at 1,000,000 notes a common word's 8,659 pages);
    /// this table's lists hold titles only. Its `cjk` column is always empty, so the `cjk : …`
    /// terms of a query match no title, as `title : (cjk : …)` matches nothing.
    static let titlesTable =
        "CREATE VIRTUAL TABLE titles USING fts5(title, cjk, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3', content = '');"

    /// Format 3 had no `titles` table: it is filled from the titles the `words` table holds, in
    /// one write transaction (at 1,000,000 notes 10 s with the file cold, 5 s warm, where a rebuild
    /// from the records takes minutes). A connection that cannot write leaves it at format 3 (then "another format"
    /// for the caller); one that waits past the busy timeout throws that (nothing is discarded).
    private func upgradeFromFormat3() throws(SQLiteError) {
        do {
            try connection.transaction(write: true) { () throws(SQLiteError) in
                guard try meta("format") == "3" else { return }  // another process upgraded it first
                try connection.execute(
                    Self.titlesTable + """
                        INSERT INTO titles(rowid, title, cjk) SELECT rowid, title, '' FROM words;
                        UPDATE meta SET value = '\(Self.formatVersion)' WHERE key = 'format';
                        """)
            }
        } catch  where error.code == SQLITE_READONLY || error.code == SQLITE_CANTOPEN {
            return
        }
    }

    private func createSchema() throws(SQLiteError) {
        try connection.transaction(write: true) { () throws(SQLiteError) in
            // Another process may have created it between the check and the lock.
            let tables = try connection.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'meta'").rows { $0.int(0) }
            guard tables.first == 0 else {
                return
            }
            try connection.execute(
                """
                CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
                CREATE TABLE docs(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, type TEXT NOT NULL, folder TEXT,
                    file_name TEXT NOT NULL, name_key TEXT NOT NULL DEFAULT '', modified REAL, unreadable INTEGER NOT NULL DEFAULT 0);
                CREATE TABLE links(doc INTEGER NOT NULL, key TEXT NOT NULL, target TEXT NOT NULL, style INTEGER NOT NULL,
                    line INTEGER NOT NULL);
                CREATE INDEX links_doc ON links(doc);
                CREATE TABLE tags(doc INTEGER NOT NULL, tag TEXT NOT NULL, folded TEXT NOT NULL);
                CREATE INDEX tags_doc ON tags(doc);
                CREATE TABLE props(doc INTEGER NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL, text TEXT, number REAL);
                CREATE INDEX props_doc ON props(doc);
                CREATE INDEX docs_unreadable ON docs(name) WHERE unreadable != 0;
                CREATE TABLE folders(name TEXT PRIMARY KEY, path TEXT NOT NULL) WITHOUT ROWID;
                CREATE VIRTUAL TABLE words USING fts5(title, body, cjk, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
                CREATE VIRTUAL TABLE grams USING fts5(body, tokenize = 'trigram case_sensitive 1', content = '', detail = 'none');
                \(Self.titlesTable)
                \(Self.createLookupIndexes)
                INSERT INTO words(words, rank) VALUES ('rank', 'bm25(\(Self.columnWeights))');
                INSERT INTO meta VALUES ('format', '\(Self.formatVersion)');
                """)
        }
    }

    func meta(_ key: String) throws(SQLiteError) -> String? {
        try connection.cachedStatement("SELECT value FROM meta WHERE key = ?").rows([.text(key)]) { $0.text(0) }.first
    }

    /// The change token the index holds every commit up to; nil while it was never completed.
    public func token() throws(SQLiteError) -> ChangeToken? {
        try meta("token").flatMap(ChangeToken.init(stringValue:))
    }

    /// The journal stamp (``RecordDatabase/journalStamp(path:)``) read before the index last
    /// caught up to its token: while the journal still has it, the index holds every commit.
    public func journalStamp() throws(SQLiteError) -> String? { try meta("journal") }

    /// Whether a build is under way (or was left by a killed process): the token is not yet valid.
    public func isBuilding() throws(SQLiteError) -> Bool { try meta("building") != nil }

    /// How many records it holds.
    public func documentCount() throws(SQLiteError) -> Int {
        Int(try connection.prepare("SELECT count(*) FROM docs").rows { $0.int(0) }.first ?? 0)
    }

    /// Sets the connection's page cache, in KiB (SQLite's default: 2,000).
    public func setCacheSize(kibibytes: Int) throws(SQLiteError) { try connection.execute("PRAGMA cache_size=-\(kibibytes)") }

    /// Changes the index in one transaction (the write lock is taken first, so `body` reads the
    /// token the last writer left); all of `body`'s changes or none.
    ///
    /// - Throws: ``SQLiteError`` (busy past the timeout, a full disk, damage).
    public func update<T>(_ body: (IndexWriter) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try checkRoom()
        do {
            return try connection.transaction(write: true) { () throws(SQLiteError) -> T in
                try body(IndexWriter(index: self))
            }
        } catch  where error.isFull {
            // A rolled-back transaction leaves its pages in the -wal file: give the space back.
            try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            throw error
        }
    }

    /// The free space below which the index is not written: the notes need it more (a save, a
    /// delete that frees space, the store's reserve). A quarter of a small filesystem, else 8 MiB.
    static func freeSpaceFloor(filesystemBytes: Int) -> Int { min(8 << 20, filesystemBytes / 4) }

    /// Throws `SQLITE_FULL` when the filesystem of the index has less free space than
    /// ``freeSpaceFloor(filesystemBytes:)`` (a temporary index, elsewhere, is not checked).
    private func checkRoom() throws(SQLiteError) {
        guard !path.isEmpty else { return }
        var st = statvfs()
        guard statvfs((path as NSString).deletingLastPathComponent, &st) == 0 else { return }
        let free = Int(clamping: UInt64(st.f_bavail) &* UInt64(st.f_frsize))
        let size = Int(clamping: UInt64(st.f_blocks) &* UInt64(st.f_frsize))
        let floor = Self.freeSpaceFloor(filesystemBytes: size)
        guard free < floor else { return }
        throw SQLiteError(
            code: SQLITE_FULL,
            message: "\(path): \(free >> 10) KiB free, under the \(floor >> 10) KiB the index leaves to the notes")
    }

    /// Runs `body` in one read transaction: everything it reads is of one state of the index.
    public func read<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try connection.transaction(write: false, body)
    }

    /// Checks the file (`PRAGMA integrity_check` and FTS5's `integrity-check`): nil when sound.
    public func damage() -> String? {
        do {
            let result = try connection.prepare("PRAGMA integrity_check").rows { $0.text(0) }
            guard result == ["ok"] else { return result.prefix(3).joined(separator: "; ") }
            try connection.execute(
                "INSERT INTO words(words) VALUES ('integrity-check'); INSERT INTO titles(titles) VALUES ('integrity-check')")
            return nil
        } catch { return error.message }
    }
}

/// What one write transaction of ``TextIndex/update(_:)`` may do.
public struct IndexWriter {
    let index: TextIndex
    var connection: SQLiteConnection { index.connection }

    /// The token the index holds every commit up to (nil: never completed).
    public func token() throws(SQLiteError) -> ChangeToken? { try index.token() }

    /// Sets the token (and forgets the journal stamp that went with the old one).
    public func setToken(_ token: ChangeToken?) throws(SQLiteError) {
        try setMeta("token", token?.stringValue)
        try setMeta("journal", nil)
    }

    /// A free-form bookkeeping value (a build's progress).
    public func meta(_ key: String) throws(SQLiteError) -> String? { try index.meta(key) }

    public func setMeta(_ key: String, _ value: String?) throws(SQLiteError) {
        if let value {
            try connection.cachedStatement("INSERT OR REPLACE INTO meta VALUES (?, ?)").run([.text(key), .text(value)])
        } else {
            try connection.cachedStatement("DELETE FROM meta WHERE key = ?").run([.text(key)])
        }
    }

    /// Empties the index (a rebuild starts here), without ``TextIndex/lookupIndexes``: the build
    /// makes them at its end (``createLookupIndexes()``).
    public func removeAll() throws(SQLiteError) {
        try connection.execute(
            """
            \(TextIndex.lookupIndexes.map { "DROP INDEX IF EXISTS \($0.name);" }.joined(separator: " "))
            DELETE FROM docs; DELETE FROM folders; DELETE FROM meta WHERE key != 'format';
            DELETE FROM links; DELETE FROM tags; DELETE FROM props;
            DELETE FROM words; INSERT INTO grams(grams) VALUES ('delete-all'); INSERT INTO titles(titles) VALUES ('delete-all');
            """)
    }

    /// Makes the ``TextIndex/lookupIndexes`` a build left out (nothing for those that exist).
    public func createLookupIndexes() throws(SQLiteError) { try connection.execute(TextIndex.createLookupIndexes) }

    /// Adds or replaces the document of a record.
    public func save(_ document: IndexedDocument) throws(SQLiteError) {
        let id: Int64
        // A rename or a move changes a document's title or folder, not its body: the body's
        // trigrams (the costliest rows to delete and insert again) are kept when it is the same.
        var kept = KeptText.none
        if let existing = try rowID(document.name) {
            kept = document.unreadable ? .none : try keptText(existing, for: document)
            try removeText(existing, keepingGrams: kept != .none, keepingWords: kept == .all)
            try removeDerived(existing)
            try connection.cachedStatement(
                "UPDATE docs SET type = ?, folder = ?, file_name = ?, name_key = ?, modified = ?, unreadable = ? WHERE id = ?"
            ).run(document.rowValues + [.integer(existing)])
            id = existing
        } else {
            try connection.cachedStatement(
                "INSERT INTO docs(type, folder, file_name, name_key, modified, unreadable, name) VALUES (?, ?, ?, ?, ?, ?, ?)"
            ).run(document.rowValues + [.text(document.name)])
            id = index.connection.lastInsertRowID
        }
        guard !document.unreadable else { return }
        try saveDerived(document, id: id)
        if kept != .all {
            try connection.cachedStatement("INSERT INTO words(rowid, title, body, cjk) VALUES (?, ?, ?, ?)").run([
                .integer(id), .text(document.title), .text(document.body), .text(document.preparedText?.cjk ?? document.cjk),
            ])
            try connection.cachedStatement("INSERT INTO titles(rowid, title, cjk) VALUES (?, ?, '')").run([
                .integer(id), .text(document.title),
            ])
        }
        if kept == .none, !document.body.isEmpty {
            try connection.cachedStatement("INSERT INTO grams(rowid, body) VALUES (?, ?)").run([
                .integer(id), .text(document.preparedText?.grams ?? Predicate.substringForm(document.body)),
            ])
        }
    }

    /// Removes a record's document (nothing when it has none).
    public func delete(_ name: String) throws(SQLiteError) {
        guard let id = try rowID(name) else { return }
        try removeText(id)
        try removeDerived(id)
        try connection.cachedStatement("DELETE FROM docs WHERE id = ?").run([.integer(id)])
    }

    /// Sets the file name a document shows under in its folder (and its link lookup key).
    public func setFileName(_ name: String, _ fileName: String, key: String) throws(SQLiteError) {
        try connection.cachedStatement("UPDATE docs SET file_name = ?, name_key = ? WHERE name = ?").run([
            .text(fileName), .text(key), .text(name),
        ])
    }

    /// The file names of the documents in `folder` (nil: the root), by record name.
    public func fileNames(inFolder folder: String?) throws(SQLiteError) -> [String: String] {
        let rows: [(String, String)]
        if let folder {
            rows = try connection.cachedStatement("SELECT name, file_name FROM docs WHERE folder = ?").rows([.text(folder)]) {
                ($0.text(0), $0.text(1))
            }
        } else {
            rows = try connection.cachedStatement("SELECT name, file_name FROM docs WHERE folder IS NULL").rows { ($0.text(0), $0.text(1)) }
        }
        return Dictionary(rows, uniquingKeysWith: { a, _ in a })
    }

    /// Replaces every folder's path (the mount's names, from the root, no trailing `/`).
    public func setFolderPaths(_ paths: [String: String]) throws(SQLiteError) {
        try connection.execute("DELETE FROM folders")
        let insert = try connection.prepare("INSERT INTO folders VALUES (?, ?)")
        for (name, path) in paths { try insert.run([.text(name), .text(path)]) }
    }

    /// The path the index holds for a folder; nil when it has none.
    public func folderPath(ofFolder name: String) throws(SQLiteError) -> String? { try index.folderPath(ofFolder: name) }

    /// The folder a document is in (`.some(nil)`: the root); nil when it has no row.
    public func folder(of name: String) throws(SQLiteError) -> String?? {
        let rows = try connection.cachedStatement("SELECT folder FROM docs WHERE name = ?").rows([.text(name)]) {
            $0.isNull(0) ? nil : $0.text(0)
        }
        return rows.first
    }

    /// The folder a document is in (nil: the root) and the file name it shows under there; nil
    /// when it has no row.
    public func placement(of name: String) throws(SQLiteError) -> (folder: String?, fileName: String)? { try index.placement(of: name) }

    /// Whether `name` is a folder the index has a path for.
    public func hasFolder(_ name: String) throws(SQLiteError) -> Bool {
        try !connection.cachedStatement("SELECT 1 FROM folders WHERE name = ?").rows([.text(name)]) { $0.int(0) }.isEmpty
    }

    /// Every folder that holds a document (nil: the root).
    public func allFolders() throws(SQLiteError) -> [String?] {
        try connection.prepare("SELECT DISTINCT folder FROM docs").rows { $0.isNull(0) ? nil : $0.text(0) }
    }

    /// The record names of every document.
    public func documentNames() throws(SQLiteError) -> Set<String> {
        Set(try connection.prepare("SELECT name FROM docs").rows { $0.text(0) })
    }

    func rowID(_ name: String) throws(SQLiteError) -> Int64? {
        try connection.cachedStatement("SELECT id FROM docs WHERE name = ?").rows([.text(name)]) { $0.int(0) }.first
    }

    /// Removes a document's text from the three tables: the contentless trigram and title tables
    /// need the values they were given, from the word table's copy. `keepingGrams`,
    /// `keepingWords`: those rows stay (the title row goes with the word row).
    private func removeText(_ id: Int64, keepingGrams: Bool = false, keepingWords: Bool = false) throws(SQLiteError) {
        guard !keepingWords else { return }
        let old = try connection.cachedStatement("SELECT title, body FROM words WHERE rowid = ?").rows([.integer(id)]) {
            ($0.text(0), $0.text(1))
        }
        guard let (title, body) = old.first else { return }
        if !body.isEmpty, !keepingGrams {
            try connection.cachedStatement("INSERT INTO grams(grams, rowid, body) VALUES ('delete', ?, ?)").run(
                [.integer(id), .text(Predicate.substringForm(body))])
        }
        try connection.cachedStatement("INSERT INTO titles(titles, rowid, title, cjk) VALUES ('delete', ?, ?, '')").run(
            [.integer(id), .text(title)])
        try connection.cachedStatement("DELETE FROM words WHERE rowid = ?").run([.integer(id)])
    }

    /// What of a document's indexed text a new version of it leaves as it is.
    enum KeptText { case none, grams, all }

    /// What of the text of the document `id` holds `document`'s already: its body (the trigram
    /// rows), or its title and body too (the word rows as well).
    private func keptText(_ id: Int64, for document: IndexedDocument) throws(SQLiteError) -> KeptText {
        let old = try connection.cachedStatement("SELECT title, body, cjk FROM words WHERE rowid = ?").rows([.integer(id)]) {
            ($0.text(0), $0.text(1), $0.text(2))
        }
        guard let (title, body, cjk) = old.first, body == document.body else { return .none }
        return title == document.title && cjk == document.cjk ? .all : .grams
    }
}

/// What the index keeps of one record.
public struct IndexedDocument: Sendable {
    /// The record name.
    public var name: String
    public var recordType: String
    /// The record name of the folder it is shown in (nil: the root).
    public var folder: String?
    /// Its file name in that folder, as the mount shows it.
    public var fileName: String
    /// The lookup key links find it by (``LinkResolver``'s key of ``fileName``).
    public var nameKey: String = ""
    /// A note's links, tags and front-matter properties (none for other records).
    public var links: [IndexedLink] = []
    public var tags: [String] = []
    public var properties: [IndexedProperty] = []
    /// Ranked above the body (a note's title, an attachment's name).
    public var title: String { didSet { preparedText = nil } }
    public var body: String { didSet { preparedText = nil } }
    public var modificationDate: Date?
    /// Its record file could not be read: it has no text here, and queries always test it.
    public var unreadable: Bool

    public init(
        name: String, recordType: String, folder: String?, fileName: String, title: String, body: String, modificationDate: Date?,
        unreadable: Bool = false
    ) {
        self.name = name
        self.recordType = recordType
        self.folder = folder
        self.fileName = fileName
        self.title = title
        self.body = body
        self.modificationDate = modificationDate
        self.unreadable = unreadable
    }

    /// ``cjk`` and the body's ``Predicate/substringForm(_:)`` (the `grams` row), made ahead by
    /// ``prepareText()``; nil: made when it is saved.
    public private(set) var preparedText: (cjk: String, grams: String)?

    /// Makes the text forms ``IndexWriter/save(_:)`` writes (``preparedText``) on this thread: a
    /// build makes them on the threads that read the records, not on the one that writes.
    public mutating func prepareText() { preparedText = (cjk, Predicate.substringForm(body)) }

    /// What the `cjk` column holds for it (``CJKText/indexForm(_:)`` of its title and text).
    public var cjk: String {
        let title = CJKText.indexForm(self.title)
        let body = CJKText.indexForm(self.body)
        return title.isEmpty || body.isEmpty ? title + body : title + " " + body
    }

    var rowValues: [SQLiteValue] {
        [
            .text(recordType), folder.map(SQLiteValue.text) ?? .null, .text(fileName), .text(nameKey),
            modificationDate.map { .real($0.timeIntervalSinceReferenceDate) } ?? .null, .integer(unreadable ? 1 : 0),
        ]
    }
}

/// The SQLite failure the index's callers see (the wrapper lives in the `SQLite` module).
public typealias SQLiteError = SQLite.SQLiteError

import Foundation
import Index
import RecordStore
import Synchronization

/// The full-text index of a notes database, kept up to date with its records.
///
/// Notes are indexed by title and text, attachments by name; symlinks, special files and links
/// get a row without text (their names take part in naming their folder's entries). Each row
/// keeps the path the mount shows, so a search prints paths without opening the store.
///
/// ``catchUp(progress:)`` brings the index to the store's current token: incrementally from the
/// token it holds (one transaction), or, when it has none, is damaged, of another database or
/// its token expired, by a build in transactions of ``buildTransaction`` records that a later
/// catch-up continues after a kill. The mount calls it in the background after commits
/// (``startBackgroundIndexing()``); a search calls it first, so it sees every committed change.
/// An index whose token is ahead of the journal is rebuilt; a file another process removed or
/// replaced (`notesfs reindex`) is reopened before the next use (``TextIndex/isReplaced``).
///
/// Locks, in the order they may be taken: `writer` guards the connection that changes the index
/// (one catch-up at a time in this process; SQLite's lock serialises it with other processes);
/// `reader` guards the connection searches and query candidates read through (WAL: never blocked
/// by the writer). A catch-up holds `writer` and takes `reader` only to close it when it discards
/// a damaged index; nothing done holding `reader` takes `writer` (a search catches up before it
/// reads, not while). A catch-up reads the store holding `writer` (its state lock, then its own);
/// the store asks for query candidates (through `reader`) holding none of its locks.
public final class NotesSearchIndex: Sendable {
    public let database: RecordDatabase
    private let writer = Mutex<TextIndex?>(nil)
    private let reader = Mutex<TextIndex?>(nil)
    /// The background indexer (``startBackgroundIndexing(log:)``): woken by every commit, else
    /// once a minute.
    private let worker = BackgroundWorker(name: "notesfs-index", interval: .seconds(60))
    /// The last catch-up failure, for logs and `fsck` (nil after a success).
    private let lastFailure = Mutex<String?>(nil)
    private let observerID = Mutex<UInt64?>(nil)
    /// The folder tree as of the token the index last caught up to, kept so that a catch-up of a
    /// few changes does not read every folder again (``tree(after:)``). Used only by a writer
    /// (under `writer`); a leaf lock.
    private let folderTree = Mutex<(tree: FolderTree, token: ChangeToken)?>(nil)

    /// What rename plans found of records committed after the index's token
    /// (``linkRewritesBeforeCatchingUp(forFile:to:fileName:)``), by record name; a leaf lock.
    let unindexedRecords = Mutex<[String: UnindexedRecord]>([:])
    /// The keys of the links in a note's text, by record name, for the change tag they were read
    /// at (``noteLinkKeys(_:)``): a plan reads a note's text once, not at every rename after it;
    /// a leaf lock.
    let linkKeysByTag = Mutex<[String: (changeTag: String?, keys: Set<String>)]>([:])

    /// Records read (and held in memory) at a time by a build or a catch-up.
    public static let buildBatch = 1000
    /// Records a build writes per transaction (``buildBatch`` at a time). Each transaction
    /// rewrote every page of the `docs` table's indexes it touched (folder, name key, file name,
    /// date: random keys), about one a record at 1,000,000 notes: 1,000 records a transaction
    /// wrote 64 GB for a 5.6 GB index, and the 564 s build waited on the disk. A build now makes
    /// those indexes at its end (``TextIndex/lookupIndexes``); a transaction still rewrites the
    /// pages of the tables it appends to.
    static let buildTransaction = 10_000

    /// The index's page cache during a build, in KiB (2,000 otherwise): a transaction of
    /// ``buildTransaction`` documents reads again the pages a 2 MB cache dropped. At 1,000,000
    /// notes, record files cached, one run each: 314 s of CPU (89 s of it in the kernel) with 2 MB,
    /// 273 s (60 s) with 16 MB, 279 s (56 s) with 64 MB; the wall time 254 s with 2 and 16 MB. The
    /// peak RSS grows by the cache (392 to 415 MB).
    static let buildCache = 16_384

    /// Record types with a row in the index (every kind of folder entry but folders).
    static let rowTypes = Set(FolderTree.itemTypes)

    public init(database: RecordDatabase) {
        self.database = database
    }

    deinit {
        stopBackgroundIndexing()
    }

    // MARK: Catching up

    /// Brings the index up to the store's current token (building it when it has none).
    /// `progress(done, total)` is called during a build.
    ///
    /// - Throws: ``SQLiteError`` when the index cannot be written (read-only database, full
    ///   disk, another process holding the lock past the timeout); a damaged index is discarded
    ///   and built again first.
    public func catchUp(progress: ((Int, Int) -> Void)? = nil) throws(SQLiteError) {
        try writer.withLock { (index) throws(SQLiteError) in
            do throws(SQLiteError) {
                try catchUp(&index, progress: progress)
            } catch  where error.isDamage {
                index?.close()
                index = nil
                reader.withLock {
                    $0?.close()
                    $0 = nil
                }
                TextIndex.discard(databasePath: database.path)
                try catchUp(&index, progress: progress)
            }
        }
        lastFailure.withLock { $0 = nil }
    }

    private func catchUp(_ index: inout TextIndex?, progress: ((Int, Int) -> Void)?) throws(SQLiteError) {
        // Another process removed or rebuilt the file (`reindex`, a repair): use the one there now.
        if let open = index, open.isReplaced {
            open.close()
            index = nil
        }
        if index == nil { index = try TextIndex(databasePath: database.path, create: true) }
        guard let index else { return }
        // Read before catching up, so it describes no more than the token stored with it.
        let stamp = RecordDatabase.journalStamp(path: database.path)
        try? database.refresh()
        let current = database.currentToken
        if try index.token() == current, try !index.isBuilding() {
            try recordJournalStamp(stamp, in: index, token: current)
            return
        }
        // Incremental when the index's token is of this database and not expired.
        let done = try index.update { (w) throws(SQLiteError) -> Bool in
            if try w.meta("building") != nil { return false }
            guard let token = try w.token() else { return false }
            if token == current { return true }
            if token.isNewer(than: current) {
                // Another process may have committed and indexed what this one has not read yet:
                // read the journal again (its writers wait for this transaction to index).
                try? database.refresh()
                let latest = database.currentToken
                if token == latest { return true }
                // Ahead of the journal: a damaged or foreign index that would miss every new commit.
                if token.isNewer(than: latest) { return false }
            }
            guard let changes = try? database.changes(since: token) else { return false }
            try apply(changes, to: w)
            if changes.token == current { try w.setMeta("journal", stamp) }
            return true
        }
        if !done {
            try build(index, progress: progress)
            if try index.token() == current { try recordJournalStamp(stamp, in: index, token: current) }
        }
    }

    /// Builds the index from every record, in transactions of ``buildTransaction`` records by
    /// record name; continues a build a killed process left (its `building` token and `cursor`).
    /// Ends with an incremental catch-up from the build's token (what changed meanwhile).
    private func build(_ index: TextIndex, progress: ((Int, Int) -> Void)?) throws(SQLiteError) {
        let started = database.currentToken
        try index.setCacheSize(kibibytes: Self.buildCache)
        defer { try? index.setCacheSize(kibibytes: 2000) }
        try index.update { (w) throws(SQLiteError) in
            guard try w.meta("building") == nil else { return }
            try w.removeAll()
            try w.setMeta("building", started.stringValue)
            try w.setMeta("cursor", "")
        }
        // One instance names every document of the build, on the prefetch's threads or this one.
        let contents = BuildContents(FolderContents(database: database))
        // Names only: the metadata of every record at once was most of the build's peak memory.
        var all = Self.rowTypes.flatMap { database.recordNames(ofType: $0) }
        all.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var finished = false
        // The next batch's documents are made on other threads (its record files read, its text
        // scanned, its entries named) while this one writes the batch before into SQLite.
        var next: RecordPrefetch<IndexedDocument, [(name: String, document: IndexedDocument?)]>?
        let store = database
        func prefetch(_ ids: [RecordID]) -> RecordPrefetch<IndexedDocument, [(name: String, document: IndexedDocument?)]> {
            RecordPrefetch(store, ids) { record in
                var text = Self.document(record, folder: nil, fileName: "")
                text.prepareText()
                return text
            } finish: { ids, texts in
                contents.mutex.withLock { Self.documents(ids, texts: texts, in: store, contents: $0) }
            }
        }
        while !finished {
            finished = try index.update { (w) throws(SQLiteError) -> Bool in
                guard let cursor = try w.meta("cursor") else { return true }
                var start = Self.firstIndex(in: all, after: cursor)
                progress?(start, all.count)
                guard start < all.count else {
                    let building = try w.meta("building").flatMap(ChangeToken.init(stringValue:))
                    try w.createLookupIndexes()
                    try w.setFolderPaths(contents.mutex.withLock { $0.folderPaths(keepingListings: false) })
                    try w.setToken(building)
                    try w.setMeta("building", nil)
                    try w.setMeta("cursor", nil)
                    return true
                }
                let end = min(all.count, start + Self.buildTransaction)
                while start < end {
                    let ids = all[start..<min(end, start + Self.buildBatch)].map { RecordID(recordName: $0) }
                    let documents = next?.value(ifFor: ids)
                    start += ids.count
                    next =
                        start < all.count
                        ? prefetch(all[start..<min(all.count, start + Self.buildBatch)].map { RecordID(recordName: $0) }) : nil
                    try Self.write(documents ?? contents.mutex.withLock { self.documents(ids, contents: $0) }, to: w)
                    if start < end { progress?(start, all.count) }
                }
                try w.setMeta("cursor", all[end - 1])
                return false
            }
        }
        progress?(all.count, all.count)
        // What changed during the build (or since the token a killed build started from).
        try index.update { (w) throws(SQLiteError) in
            guard try w.meta("building") == nil, let token = try w.token(), token != database.currentToken else { return }
            if let changes = try? database.changes(since: token) {
                try apply(changes, to: w)
            } else {
                try w.setToken(nil)  // expired meanwhile: the next catch-up builds again
            }
        }
    }

    /// The position of the first name in `sorted` (byte order) after `cursor`.
    static func firstIndex(in sorted: [String], after cursor: String) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if cursor.utf8.lexicographicallyPrecedes(sorted[mid].utf8) { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// Applies one change set: saved and deleted rows, then the names in every folder they touched
    /// (and every folder's path when a folder was renamed, moved or deleted).
    private func apply(_ changes: ChangeSet, to w: IndexWriter) throws(SQLiteError) {
        let contents = FolderContents(database: database, tree: tree(after: changes, from: try w.token()))
        contents.keepsNamesakes = true
        var touched = TouchedNames()
        var foldersChanged = false
        var saved: [RecordID] = []
        for metadata in changes.changed {
            if metadata.recordType == Folder.recordType {
                // A folder saved with the path the index has (a new mtime, owner or mode: every
                // rename and create in it saves it) changes no path and no name; a new, moved or
                // renamed one changes paths (its siblings' too, when names collide).
                let stored = try w.folderPath(ofFolder: metadata.recordID.recordName)
                if let stored, try Self.keepsPath(metadata, stored: stored, folderPath: w.folderPath(ofFolder:), contents) { continue }
                if stored == nil || stored != (try? contents.folderPath(metadata.recordID)) { foldersChanged = true }
            } else if Self.rowTypes.contains(metadata.recordType) {
                saved.append(metadata.recordID)
                // Its new name's namesakes, and the name it left: their holders' names may change.
                let folder = contents.shownFolder(of: metadata)?.recordName
                if let kind = EntryNames.kind(ofRecordType: metadata.recordType) {
                    touched.insert(EntryNames.baseName(FolderContents.storedName(of: metadata, in: database), kind: kind), in: folder)
                } else {
                    touched.listAll(folder)
                }
                if let old = try w.placement(of: metadata.recordID.recordName) { touched.insert(old.fileName, in: old.folder) }
            }
        }
        for id in changes.deleted {
            if let old = try w.placement(of: id.recordName) {
                touched.insert(old.fileName, in: old.folder)
                try w.delete(id.recordName)
            } else if try w.hasFolder(id.recordName) {
                foldersChanged = true  // paths and names may change
            }
        }
        // The paths of the folders it names entries in, from the index when no folder moved: else
        // a folder's path is found by listing every folder above it, the root's listing included,
        // which reads every record of the database (a rename in a folder of 1,000 would cost a
        // scan of all of them).
        if !foldersChanged {
            for case let name? in touched.folders where contents.folderPathCache[RecordID(recordName: name)] == nil {
                if let path = try w.folderPath(ofFolder: name) { contents.folderPathCache[RecordID(recordName: name)] = path }
            }
        }
        for start in stride(from: 0, to: saved.count, by: Self.buildBatch) {
            try save(Array(saved[start..<min(saved.count, start + Self.buildBatch)]), to: w, contents: contents)
        }
        if foldersChanged {
            try w.setFolderPaths(contents.folderPaths())
            for folder in try w.allFolders() { touched.listAll(folder) }
        }
        for (folder, names) in touched.names where !touched.listed.contains(folder) {
            if try !renameNamesakes(of: names, in: folder, w, contents) { touched.listAll(folder) }
        }
        for folder in touched.listed {
            let stored = try w.fileNames(inFolder: folder)
            for entry in contents.listing(of: folder.map(RecordID.init(recordName:)))
            where stored[entry.recordID.recordName].map({ $0 != entry.fileName }) ?? false {
                try w.setFileName(entry.recordID.recordName, entry.fileName, key: LinkResolver.key(of: entry.fileName))
            }
        }
        try w.setToken(changes.token)
    }

    /// The file names a change set may have changed the holders of, by folder (nil: the root):
    /// a record's file name changes only when a record showing under the same base name came,
    /// left or was renamed in its folder (``EntryNames/assign(_:)``: the oldest keeps the base
    /// name, the others a suffix of their own). `listed`: folders whose every name is checked
    /// (a listing) because the names alone cannot tell.
    struct TouchedNames {
        var names: [String?: Set<String>] = [:]
        var listed = Set<String?>()
        var folders: Set<String?> { listed.union(names.keys) }

        mutating func insert(_ fileName: String, in folder: String?) { names[folder, default: []].insert(fileName) }
        mutating func listAll(_ folder: String?) { listed.insert(folder) }
    }

    /// Gives the holder of each of `names` in `folder` that name, when it alone shows under it
    /// (``FolderContents/namesakes(showingAs:in:)``: the oldest namesake keeps the base name, so a
    /// lone one has it); false when a name has several namesakes or may stand for other names
    /// (escapes, `Untitled`): then the caller lists the folder.
    private func renameNamesakes(of names: Set<String>, in folder: String?, _ w: IndexWriter, _ contents: FolderContents)
        throws(SQLiteError) -> Bool
    {
        for name in names {
            guard let holders = contents.namesakes(showingAs: name, in: folder.map(RecordID.init(recordName:))), holders.count <= 1
            else { return false }
            guard let holder = holders.first, let stored = try w.placement(of: holder.recordID.recordName), stored.folder == folder,
                stored.fileName != name
            else { continue }
            try w.setFileName(holder.recordID.recordName, name, key: LinkResolver.key(of: name))
        }
        return true
    }

    /// The folder tree after `changes` (made from `token`): the kept tree updated in O(changed
    /// folders) when it is of `token`, else read again when the store is still at the changes'
    /// token (nil otherwise: FolderContents reads it). Kept, at the changes' token, for the next
    /// catch-up and the plans made on the index it writes.
    ///
    /// The update needs no look at the store: the kept tree and the changes give the tree at the
    /// changes' token whatever came since. Under a storm of renames a commit lands between the
    /// catch-up's read of the changes and this call most of the time, and a tree dropped then
    /// left the next plans to walk every folder above each record they place.
    func tree(after changes: ChangeSet, from token: ChangeToken?) -> FolderTree? {
        let current = database.currentToken
        return folderTree.withLock { (kept) -> FolderTree? in
            if var tree = kept?.tree, kept?.token == token, token != nil,
                tree.update(saving: changes.changed.filter { $0.recordType == Folder.recordType }, deleting: changes.deleted)
            {
                kept = (tree, changes.token)
                return tree
            }
            // Read again, the tree is the store's as it is now: the changes' only when nothing came since.
            guard current == changes.token else {
                kept = nil
                return nil
            }
            let tree = FolderTree(database: database)
            kept = (tree, current)
            return tree
        }
    }

    /// The token of the folder tree kept for the next catch-up; nil when none is kept.
    var keptTreeToken: ChangeToken? { folderTree.withLock { $0?.token } }

    /// The folder tree after `changes` (made from `token`) for a plan that reads the index without
    /// writing it: the kept tree updated, when it is of `token`, without keeping the result (the
    /// next catch-up starts from the kept one); nil when there is none to start from.
    ///
    /// The kept tree may also be of a later token than `token`: the one a catch-up keeps before
    /// its transaction commits the index's new token (a plan made meanwhile, most of the time under
    /// a storm of renames, reads the index's old one). It is of no token after the changes' own,
    /// which the store is still at when the tree is used (a tree is kept at a token the store had
    /// already). The changes since `token` hold those since the kept tree's, and a folder's last
    /// state applied again to a tree that has it changes nothing.
    func treeForReading(after changes: ChangeSet, from token: ChangeToken) -> FolderTree? {
        let kept = folderTree.withLock { kept in kept.flatMap { $0.token == token || $0.token.isNewer(than: token) ? $0.tree : nil } }
        guard database.currentToken == changes.token, var tree = kept else { return nil }
        return tree.update(saving: changes.changed.filter { $0.recordType == Folder.recordType }, deleting: changes.deleted) ? tree : nil
    }

    /// Whether a saved folder still has the path the index holds for it, told without listing the
    /// folders above it (that lists the root, which reads every record): its parent's path in the
    /// index and its own name unsuffixed give that path. False when unsure (a name with a suffix):
    /// then the caller computes the path.
    /// `folderPath`: the index's path of a folder by record name.
    static func keepsPath(
        _ folder: RecordMetadata, stored: String, folderPath: (String) throws(SQLiteError) -> String?, _ contents: FolderContents
    ) throws(SQLiteError) -> Bool {
        var parentPath = ""
        if let parent = contents.shownFolder(of: folder) {
            guard let known = try folderPath(parent.recordName) else { return false }
            parentPath = known + "/"
        }
        let name = EntryNames.baseName(FolderContents.storedName(of: folder, in: contents.database), kind: .folder)
        return parentPath + name == stored
    }

    /// Reads records and saves their rows (a record that is gone is deleted from the index).
    ///
    /// Names each record keeping only the file names of the folders it lists
    /// (``FolderContents/fileName(for:in:)``), not their listings: a build names every record of
    /// the database once, and a catch-up after many saves (the indexer behind a burst of creates)
    /// names records of every folder they touched; kept listings held each entry's metadata and
    /// path until the end (40 MB of a daemon's 100 MB peak at 60,000 creates).
    func save(_ ids: [RecordID], to w: IndexWriter, contents: FolderContents) throws(SQLiteError) {
        try Self.write(documents(ids, contents: contents), to: w)
    }

    /// The documents of `ids`, their records read now, placed by `contents`
    /// (``documents(_:texts:in:contents:)``).
    func documents(_ ids: [RecordID], contents: FolderContents) -> [(name: String, document: IndexedDocument?)] {
        Self.documents(ids, texts: Self.texts(of: database.records(for: ids)), in: database, contents: contents)
    }

    /// Writes each document, or deletes the row of a record that has none (it is gone).
    static func write(_ documents: [(name: String, document: IndexedDocument?)], to w: IndexWriter) throws(SQLiteError) {
        for (name, document) in documents {
            if let document { try w.save(document) } else { try w.delete(name) }
        }
    }

    /// The documents of records read (``texts(of:)``), each placed where `contents` shows it
    /// (folder, file name, the key links find it by); an unreadable document for a record whose
    /// file could not be read, nil for a record that is gone.
    static func documents(
        _ ids: [RecordID], texts: [RecordID: Result<IndexedDocument, RecordStoreError>], in database: RecordDatabase,
        contents: FolderContents
    ) -> [(name: String, document: IndexedDocument?)] {
        ids.map { id in
            guard let metadata = database.metadata(for: id) else { return (id.recordName, nil) }
            let folder = contents.shownFolder(of: metadata)
            let fileName = contents.fileName(for: metadata, in: folder) ?? ""
            var document: IndexedDocument
            switch texts[id] {
            case .success(let text): document = text
            case .failure, nil:
                document = IndexedDocument(
                    name: id.recordName, recordType: metadata.recordType, folder: nil, fileName: "", title: "", body: "",
                    modificationDate: metadata.record.modificationDate, unreadable: true)
            }
            document.folder = folder?.recordName
            document.fileName = fileName
            document.nameKey = LinkResolver.key(of: fileName)
            return (id.recordName, document)
        }
    }

    /// The documents of records read, not yet placed (``documents(_:texts:in:contents:)``).
    static func texts(of records: [RecordID: Result<Record, RecordStoreError>]) -> [RecordID: Result<IndexedDocument, RecordStoreError>] {
        records.mapValues { $0.map { document($0, folder: nil, fileName: "") } }
    }

    /// What the index keeps of a record: a note's title and text, an attachment's name.
    static func document(_ record: Record, folder: String?, fileName: String) -> IndexedDocument {
        let title: String
        var body = ""
        switch record.recordType {
        case Note.recordType:
            title = record[FieldName.title]?.stringValue ?? ""
            body = record[FieldName.text]?.stringValue ?? ""
        case Attachment.recordType:
            title = record[FieldName.name]?.stringValue ?? ""
        default:
            title = ""
        }
        var document = IndexedDocument(
            name: record.recordID.recordName, recordType: record.recordType, folder: folder, fileName: fileName, title: title, body: body,
            modificationDate: record.modificationDate)
        document.nameKey = LinkResolver.key(of: fileName)
        if record.recordType == Note.recordType { NoteIndexing.describe(body, into: &document) }
        return document
    }

    // MARK: Background

    /// How long the indexer waits after a catch-up before the next: a storm of commits is
    /// caught up in one batch.
    static let catchUpSpacing: Duration = .milliseconds(200)

    /// Ends the background indexer's pause (``catchUpSpacing``): a rename found this many records
    /// committed after the index's token (``hurryAfter``), each of which its plan and the next
    /// rename's look at.
    func hurryBackgroundIndexing() { worker.hurry() }

    /// Catches up after every commit (coalesced, at most a few times a second) on a thread of its
    /// own, until ``stopBackgroundIndexing()``. Failures are logged and retried at the next commit
    /// or after a minute.
    public func startBackgroundIndexing(log: @escaping @Sendable (String) -> Void) {
        let worker = self.worker
        let id = database.addObserver { _ in worker.wake() }
        observerID.withLock { $0 = id }
        worker.wake()  // the first catch-up: whatever happened while nothing indexed
        worker.start { [weak self] worker in
            while worker.next() != nil {
                guard let self else { return }
                do throws(SQLiteError) {
                    try self.catchUp()
                } catch {
                    let message = "search index: \(error.description)"
                    if self.lastFailure.withLock({ $0 }) != message { log(message) }
                    self.lastFailure.withLock { $0 = message }
                }
                guard worker.pause(Self.catchUpSpacing) else { return }
            }
        }
    }

    /// Stops the background indexer: it ends at once when it waits, else after the catch-up under
    /// way (not waited for: a first build may take minutes, and each of its transactions leaves
    /// the index consistent).
    public func stopBackgroundIndexing() {
        if let id = observerID.withLock({ $0 }) { database.removeObserver(id) }
        observerID.withLock { $0 = nil }
        worker.stop()
    }

    // MARK: Reading

    /// Runs `body` with the reading connection (opened on first use; nil when there is no index).
    func withReader<T>(_ body: (TextIndex) throws(SQLiteError) -> T) throws(SQLiteError) -> T? {
        try reader.withLock { (index) throws(SQLiteError) -> T? in
            if let open = index, open.isReplaced {
                open.close()
                index = nil
            }
            if index == nil { index = try? TextIndex(databasePath: database.path, create: false) }
            guard let current = index else { return nil }
            do throws(SQLiteError) { return try body(current) } catch {
                if error.isDamage {
                    current.close()
                    index = nil
                }
                throw error
            }
        }
    }

    public var failure: String? { lastFailure.withLock { $0 } }
}

/// The ``FolderContents`` a build names its documents with: on the prefetch's threads and on the
/// build's, one at a time (`mutex`).
private final class BuildContents: Sendable {
    let mutex: Mutex<FolderContents>
    init(_ contents: sending FolderContents) { mutex = Mutex(contents) }
}

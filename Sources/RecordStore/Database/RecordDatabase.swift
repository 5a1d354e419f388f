import Foundation
import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A CloudKit-style record database kept as JSON files in one directory.
///
/// Thread-safe and multi-process: commits are serialised by a file lock, and every process catches
/// up with the journal before it commits. Open it after any `fork` (for example after
/// `fuse_daemonize`): it starts a background thread that syncs about every second and picks up
/// other processes' commits about four times a second.
///
/// Locks, in the order they may be taken (never the other way round):
/// 1. `state` (``DatabaseState``): the index (and its SQLite connection to the metadata index
///    file, which only this lock's holder uses), the journal, and this process's bookkeeping.
///    Held for every read of the index (copied out, then used outside it) and for a whole
///    commit, catch-up, checkpoint or sync, including their file I/O.
/// 2. The commit lock: an exclusive `flock(2)` of the lock file through `state.lockFD`, taken only
///    with `state` held (a commit, a catch-up before a commit, a checkpoint, a sync, an asset collection, the background rewrite of lagging files), so that processes
///    commit one at a time. Readers that must not meet a record file half-written take it shared
///    through a descriptor of their own (``whileNoCommitWrites(_:)``: ``readStoredRecordFile(_:)``,
///    a query's second scan, the journal stamp before a scan), and take no lock of this database
///    while they hold it: a commit of this process waits for the commit lock holding `state`.
///    ``holdingOffOtherWriters(_:)`` holds it across a plan and its commit, without `state` in
///    between: `state.commitLockHolds` (guarded by `state`) says so, and meanwhile this process
///    neither takes it again nor waits for it (``lockCommits(_:shared:)``, ``whileNoCommitWrites(_:)``).
/// 3. Leaf locks, under which nothing else is taken: `commitHook` (read inside a commit; the hook
///    runs there and must not call the database), `problemLog` (``log(_:)``, called anywhere),
///    `journalDamage`, `candidateSource` (copied out; the source is asked with no lock held), `observers`
///    (copied out; ``notify(_:)`` calls them after the commit, with no lock held), and each
///    ``BackgroundWorker``'s own lock. `nextObserverID` is an atomic.
///
/// Threads: the background worker (`background`) takes `state` for each of its rounds. `close()`
/// stops and joins it; it holds the database while it runs, so `deinit` comes after it. A
/// background checkpoint's thread (`checkpointWorkers`) writes the index file through a SQLite
/// connection of its own with no lock held, then takes `state` and the commit lock to start the
/// new journal; `close()` joins it too.
public final class RecordDatabase: Sendable {
    public let path: String
    /// Identifies this database in change tokens.
    public let databaseID: String
    /// Whether this process may not write the database (read-only filesystem or permissions):
    /// reads work, changes throw ``RecordStoreError/readOnly(path:)``.
    public let isReadOnly: Bool
    let layout: DatabaseLayout
    let state: Mutex<DatabaseState>
    let observers = Mutex<[UInt64: @Sendable (RecordStoreChange) -> Void]>([:])
    let nextObserverID = Atomic<UInt64>(1)
    /// A derived index that narrows substring queries (``setCandidateSource(_:)``); nil: scan.
    let candidateSource = Mutex<(any QueryCandidateSource)?>(nil)
    /// The store's background thread (``startBackgroundWork()``): stopped and joined by `close()`.
    let background = BackgroundWorker(name: "notesfs.store", interval: .milliseconds(250))
    /// Problems met while reading (damaged files), for logs and fsck.
    let problemLog = Mutex<[String]>([])
    /// The journal lines recovery could not read at open, and what it did with them: reported by
    /// ``check(repair:)`` until a repair has reported them.
    let journalDamage: Mutex<[JournalLineDamage]>
    /// The hook every modify of this instance calls (``setCommitHook(_:)``). Its own lock, read
    /// inside a commit with the state lock held (never taken the other way round).
    let commitHook = Mutex<(any CommitHook)?>(nil)
    /// Whether a commit that takes the journal past ``checkpointMinimum`` writes the index file on
    /// a thread of its own (``startCheckpoint(_:)``) instead of in the commit: a process with a
    /// background thread (the mount), whose requests should not wait for it.
    let checkpointsInBackground: Bool
    /// The threads of the background checkpoints this process started (``waitForCheckpoint()``
    /// joins them). Its own lock, a leaf: never held while another is taken.
    let checkpointWorkers = Mutex<[BackgroundWorker]>([])
    /// Numbers the background checkpoints (``PendingCheckpoint/id``).
    let nextCheckpointID = Atomic<UInt64>(0)
    /// Tests: called on a background checkpoint's thread once the index file holds its commit and
    /// before it takes the locks to start the new journal (commits and other processes go on).
    let checkpointPause = Mutex<(@Sendable () -> Void)?>(nil)

    /// Opens (creating when `create` and absent) the database at `path`, running crash recovery.
    ///
    /// - Throws: ``RecordStoreError/notADatabase(path:reason:)`` when the directory is missing or
    ///   holds something else, ``RecordStoreError/unsupportedFormat(found:supported:)`` for a newer
    ///   format, ``RecordStoreError/io(path:operation:errno:)`` on I/O failure.
    public init(path: String, create: Bool = true, backgroundThread: Bool = true) throws(RecordStoreError) {
        let layout = DatabaseLayout(root: path)
        self.layout = layout
        self.path = layout.root
        checkpointsInBackground = backgroundThread
        let (databaseID, format) = try Self.prepareDirectory(layout, create: create)
        self.databaseID = databaseID
        let (lockFD, writable) = try Self.openLock(layout)
        isReadOnly = !writable
        do throws(RecordStoreError) {
            // Read-only: a shared lock, so that no commit is half-done while the index loads.
            try Sys.lock(lockFD, shared: !writable, path: layout.lockFile)
            defer { Sys.unlock(lockFD) }
            let recovered = try Self.recover(layout, databaseID: databaseID, lockFD: lockFD, writable: writable)
            if writable, format < DatabaseLayout.formatVersion {
                // Format 1 journals hold full records only; from 2 on a line may hold a partial
                // record (metadata-only save), which a format-1 binary would take for a full one.
                try Self.writeFormatFile(layout, databaseID: databaseID)
            }
            var opened = DatabaseState(lockFD: lockFD, index: recovered.index, journal: recovered.journal)
            opened.unwrittenRecordFiles = recovered.unwritten
            state = Mutex(opened)
            journalDamage = Mutex(recovered.damages)
            if writable {
                _ = state.withLock { sweepOrphans(&$0, olderThan: Self.assetGracePeriod) }
                Self.ensureSpaceReserve(layout)
            }
        } catch {
            Sys.close(lockFD)
            throw error
        }
        for damage in journalDamage.withLock({ $0 }) { log(damage.description) }
        // A journal over the threshold (left by a version whose checkpoints came later, or by a
        // failed checkpoint): written into the index file now, not read again by every open.
        if writable, state.withLock({ $0.wantsCheckpoint }) { try? checkpoint() }
        if backgroundThread { startBackgroundWork() }
    }

    /// The default database location: `$XDG_DATA_HOME/notesfs`, else `~/.local/share/notesfs`.
    public static var defaultPath: String {
        let env = ProcessInfo.processInfo.environment
        if let xdg = env["XDG_DATA_HOME"], xdg.hasPrefix("/") { return xdg + "/notesfs" }
        let home = env["HOME"] ?? NSHomeDirectory()
        return home + "/.local/share/notesfs"
    }

    deinit {
        background.stop()
        background.join()  // at once: its thread holds no reference while it waits
        state.withLock { state in
            // Only this process's own unsynced lines: a command that only read writes nothing.
            if state.dirty { try? state.journal.sync() }
            for pin in state.pins.values { try? Sys.unlink(pin) }
            state.journal.close()
            Sys.close(state.lockFD)
        }
    }

    /// Stops the background thread, rewrites the lagging record files of records the index holds
    /// whole (so that the record files hold every such save even if the journal is lost), when
    /// this process committed checkpoints a journal over ``quietCheckpointMinimum``, and makes
    /// everything durable.
    public func close() throws(RecordStoreError) {
        background.stop()
        background.join()
        waitForCheckpoint()
        try refreshWholeRecordFiles(limit: .max)
        // A writer leaves a short journal: every later open replays it.
        if state.withLock({ $0.hasCommitted }) { checkpointIfLong() }
        try sync()
    }

    // MARK: Opening

    /// Checks that `path` is a database this code can open (creating an empty one when `create`),
    /// without loading it: for a clear error before a long-running process starts.
    ///
    /// - Throws: the errors of ``init(path:create:backgroundThread:)`` about the directory and format.
    public static func validate(path: String, create: Bool) throws(RecordStoreError) {
        _ = try prepareDirectory(DatabaseLayout(root: path), create: create)
    }

    private static func writeFormatFile(_ layout: DatabaseLayout, databaseID: String) throws(RecordStoreError) {
        let format = "{\"format\":\(DatabaseLayout.formatVersion),\"databaseID\":\"\(databaseID)\"}\n"
        try Sys.writeFileAtomically(layout.formatFile, Array(format.utf8), temp: RecordFiles.tempPath(layout), durable: true)
    }

    /// Opens the lock file for writing (creating it); when the database may not be written
    /// (`EROFS`, `EACCES`, `EPERM`, or a full disk where the lock file is missing) opens it, or the
    /// directory, read-only: `flock(2)` works on any descriptor. Returns the descriptor and whether
    /// the database is writable.
    private static func openLock(_ layout: DatabaseLayout) throws(RecordStoreError) -> (Int32, Bool) {
        do {
            return (try Sys.open(layout.lockFile, O_RDWR | O_CREAT), true)
        } catch {
            guard case .io(_, _, let code) = error, [EROFS, EACCES, EPERM, ENOSPC, EDQUOT].contains(code) else { throw error }
            if let fd = try? Sys.open(layout.lockFile, O_RDONLY) { return (fd, false) }
            return (try Sys.open(layout.root, O_RDONLY | O_DIRECTORY), false)
        }
    }

    /// Checks or creates the database directory; returns its ID and format version.
    private static func prepareDirectory(_ layout: DatabaseLayout, create: Bool) throws(RecordStoreError) -> (String, Int64) {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: layout.root, isDirectory: &isDirectory) {
            guard create else { throw .notADatabase(path: layout.root, reason: "no such directory") }
            try makeParents(of: layout.root)
            try Sys.mkdir(layout.root)
        } else if !isDirectory.boolValue {
            throw .notADatabase(path: layout.root, reason: "not a directory")
        }
        if let data = try Sys.readFile(layout.formatFile, limit: DatabaseLayout.formatFileLimit) {
            guard let json = try? JSON.parse(data), let format = json["format"]?.int64, let id = json["databaseID"]?.string else {
                throw .notADatabase(path: layout.root, reason: "notesfs.json is damaged")
            }
            guard format <= DatabaseLayout.formatVersion else {
                throw .unsupportedFormat(found: Int(format), supported: DatabaseLayout.formatVersion)
            }
            return (id, format)
        }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: layout.root)) ?? []
        // Only our own files (a creation interrupted before notesfs.json was written) may be there.
        let ours: Set<String> = ["lock", "records", "assets", "tmp", "journal.jsonl"]
        guard entries.allSatisfy({ ours.contains($0) || $0.hasPrefix(".") }) else {
            throw .notADatabase(path: layout.root, reason: "directory is not empty and has no notesfs.json")
        }
        // A new database, maybe in an empty directory the user made (0755): private like its files.
        // (Only here: an existing database's modes are fsck's to report and --repair's to set.)
        guard chmod(layout.root, Sys.directoryMode) == 0 else { throw .io(path: layout.root, operation: "chmod", errno: errno) }
        let id = UUID.random().uuidString
        for dir in [layout.records, layout.assets, layout.temp] { try Sys.mkdir(dir) }
        for shard in 0..<256 { try Sys.mkdir(layout.records + "/" + String(format: "%02x", shard)) }
        try JournalFile.create(path: layout.journal, temp: RecordFiles.tempPath(layout), generation: 0, baseSeq: 0)
        try writeFormatFile(layout, databaseID: id)
        return (id, Int64(DatabaseLayout.formatVersion))
    }

    /// `mkdir -p` of the directories above a new database's (mode 0755 less the umask: they are
    /// the user's, not the database's). A relative path's parents are under the working directory.
    ///
    /// - Throws: ``RecordStoreError/io(path:operation:errno:)`` naming the directory and the real errno.
    private static func makeParents(of root: String) throws(RecordStoreError) {
        var prefix = root.hasPrefix("/") ? "/" : ""
        for component in root.split(separator: "/").dropLast() {
            prefix += (prefix.isEmpty || prefix == "/" ? "" : "/") + component
            guard Glibc.mkdir(prefix, 0o755) != 0 else { continue }
            let code = errno
            var st = stat()
            // Already there: fine if it is a directory (or a link to one), else the real error.
            if code == EEXIST, stat(prefix, &st) == 0, st.st_mode & S_IFMT == S_IFDIR { continue }
            throw .io(path: prefix, operation: "mkdir", errno: code == EEXIST ? ENOTDIR : code)
        }
    }

    /// Crash recovery, with the commit lock held: load the snapshot (or rebuild it from the record
    /// files), replay the journal, cut a torn last line, and redo record files the journal holds.
    ///
    /// A damaged or oversized journal or snapshot is moved into `lost+found/` and what it held is
    /// rebuilt from the record files. Read-only (`writable` false), nothing is written: the index
    /// is built in memory and damage is only logged.
    private static func recover(_ layout: DatabaseLayout, databaseID: String, lockFD: Int32, writable: Bool) throws(RecordStoreError) -> (
        index: RecordIndex, journal: JournalFile, damages: [JournalLineDamage], unwritten: [String: UnwrittenRecordFile]
    ) {
        if writable {
            try Sys.mkdir(layout.temp)
            TempFiles.clearLeftovers(layout)
        }
        let lostAndFound = LostAndFound(layout)
        var journal: JournalFile
        do {
            journal = try JournalFile(path: layout.journal, writable: writable)
        } catch {
            // The journal is gone or its header unreadable: the record files are the truth.
            switch error {
            case .io(_, _, ENOENT) where writable:
                notice("\(layout.journal) is missing; the index is rebuilt from the record files")
            case .damagedRecord where writable:
                let moved = try lostAndFound.moveAside(layout.journal)
                notice("\(error); the journal was moved to \(moved) and the index is rebuilt from the record files")
            default:
                throw error
            }
            let rebuilt = try rebuildFromRecordFiles(layout, databaseID: databaseID, lostAndFound: lostAndFound)
            return (rebuilt.index, rebuilt.journal, [], [:])
        }
        let base = try openBase(layout, databaseID: databaseID, journal: journal, writable: writable)
        var index = RecordIndex(base: base)
        // A line that does not decode is skipped, not the lines after it: the journal's lines are
        // consecutive, so it was the commit after the line before it, and an entry built from the
        // record files of the records it names stands in for it (``standIn(for:seq:index:layout:)``).
        var lastSeq = journal.baseSeq
        var damagedLines: [(line: DamagedJournalLine, standIn: JournalEntry)] = []
        var damages: [JournalLineDamage] = []
        // On a full disk the files stay unwritten and are read from the journal (the open of a
        // command that only reads must not fail for want of space).
        var unwritten: [String: UnwrittenRecordFile] = [:]
        var outOfSpace: RecordStoreError?
        let journalInode = journal.inode
        // Lines whose files a commit or an open of this boot found written are not read again.
        let mark = VerifiedMark.read(lockFD)
        let verifiedUpTo = mark?.generation == journal.generation ? mark?.offset ?? 0 : 0
        let damage = try journal.readEntries { (entry) throws(RecordStoreError) in
            lastSeq = entry.seq
            guard entry.seq > index.seq else { return }
            index.apply(entry)
            if writable, (entry.lineOffset ?? 0) >= verifiedUpTo {
                let error = try redo(entry, layout: layout, verify: true, journalInode: journalInode, unwritten: &unwritten).error
                outOfSpace = error ?? outOfSpace
            }
        } damaged: { line in
            lastSeq = lastSeq == .max ? .max : lastSeq + 1
            var standIn = JournalEntry(seq: lastSeq, saves: [], deletes: [])
            var report = JournalLineDamage(offset: line.offset, reason: line.reason + "; the index snapshot already holds its commit")
            if lastSeq > index.seq {
                (standIn, report) = Self.standIn(for: line, seq: lastSeq, index: index, layout: layout)
                index.apply(standIn)
            }
            damagedLines.append((line, standIn))
            damages.append(report)
        }
        if let damage {
            if writable {
                // A line over the limit: keep the whole file aside and go on with the lines before it.
                let moved = try journal.setAsideTail(lostAndFound)
                notice("\(damage); the journal was moved to \(moved) and its lines before that byte kept")
            } else {
                notice("\(damage); the rest of the journal is ignored (read-only)")
            }
        }
        if writable, !damagedLines.isEmpty {
            // Each damaged line is kept in lost+found, then replaced in the journal by its stand-in.
            do throws(RecordStoreError) {
                for (i, item) in damagedLines.enumerated() {
                    damages[i].copy = try lostAndFound.keep(item.line.bytes + [0x0A], as: "journal.jsonl-line-at-\(item.line.offset)")
                }
                try journal.replaceLines(
                    damagedLines.map { ($0.line.range, $0.standIn.encodedLine()) }, temp: RecordFiles.tempPath(layout))
            } catch {
                notice("setting the damaged journal lines aside: \(error); they stay in the journal")
            }
        }
        if writable { try journal.truncateTail() }
        if writable {
            // Stand-ins moved the lines after them: nothing is known verified until an open checks them all.
            let checkedAll = outOfSpace == nil && unwritten.isEmpty && damage == nil && damagedLines.isEmpty
            VerifiedMark.write(lockFD, generation: journal.generation, offset: checkedAll ? journal.size : 0)
        }
        if base.header.seq > lastSeq, base.header.seq > journal.baseSeq {
            // The index holds commits the journal does not: it is not this journal's (a copy, a
            // journal set aside). The record files, with the journal redone over them, are the truth.
            notice("\(base.path) holds commit \(base.header.seq), the journal ends at \(lastSeq); it is rebuilt")
            var rebuilt = rebuildIndex(layout)
            rebuilt.seq = journal.baseSeq
            let replay = try JournalFile(path: layout.journal, writable: writable)
            defer { replay.close() }
            var reader = replay
            _ = try reader.readEntries { entry in
                if entry.seq > rebuilt.seq { rebuilt.apply(entry) }
            } damaged: { _ in
            }
            index = RecordIndex(
                base: try MetadataIndexFile.build(
                    path: writable ? layout.metadataIndex : nil, databaseID: base.header.databaseID, from: rebuilt,
                    temp: RecordFiles.tempPath(layout), progress: buildProgress(rebuilt.entries.count)))
            index.staleRecordFiles = rebuilt.staleRecordFiles
        }
        if let outOfSpace, !unwritten.isEmpty {
            notice("\(outOfSpace); \(unwritten.count) record files are read from the journal until there is room")
        }
        return (index, journal, damages, unwritten)
    }

    static func notice(_ message: String) {
        FileHandle.standardError.write(Data("notesfs: \(message)\n".utf8))
    }

    /// Rebuilds the index by reading every record file (when the index file is lost). Each
    /// record's commit is read back from its change tag (the commit's seq in base 36), so that
    /// change tokens from before still find what changed after them.
    static func rebuildIndex(_ layout: DatabaseLayout) -> RecordIndex {
        var index = RecordIndex()
        var progress = ScanProgress()
        defer { progress.end() }
        RecordFiles.scan(layout) { _, result in
            progress.read(found: index.entries.count)
            if case .success(let record) = result {
                let seq = record.recordChangeTag.flatMap { UInt64($0, radix: 36) } ?? 0
                index.insert(RecordMetadata(savedRecord: record, seq: seq))
            }
        }
        return index
    }

    /// Recovery when the journal is lost (missing, or its header unreadable and set aside): the
    /// index is rebuilt from the record files (the truth; an index file is replaced, as it may
    /// hold records deleted since), and a new journal is started after it.
    ///
    /// The new journal's base is above the sequence number of every change tag in the files (a
    /// tag is its commit's seq in base 36), so no later commit reuses a tag the files hold; and
    /// every change token from before is expired (the deletes the lost journal held are unknown).
    /// The index file is written before the journal: a crash in between finds the journal still
    /// missing and rebuilds again.
    private static func rebuildFromRecordFiles(
        _ layout: DatabaseLayout, databaseID: String, lostAndFound: LostAndFound
    ) throws(RecordStoreError) -> (index: RecordIndex, journal: JournalFile) {
        if try Sys.fileStatus(layout.snapshot) != nil {
            let moved = try lostAndFound.moveAside(layout.snapshot)
            notice("the index snapshot was moved to \(moved) (the record files are newer)")
        }
        var index = rebuildIndex(layout)
        let lastTag = index.entries.values.compactMap { $0.recordChangeTag.flatMap { UInt64($0, radix: 36) } }.max() ?? 0
        index.seq = lastTag == .max ? .max : lastTag + 1
        index.tombstoneHorizon = index.seq
        let base = try MetadataIndexFile.build(
            path: layout.metadataIndex, databaseID: databaseID, from: index, temp: RecordFiles.tempPath(layout),
            progress: buildProgress(index.entries.count))
        try JournalFile.create(path: layout.journal, temp: RecordFiles.tempPath(layout), generation: 0, baseSeq: index.seq)
        return (RecordIndex(base: base), try JournalFile(path: layout.journal, writable: true))
    }

    /// The metadata index file for `journal`: opened when it is this database's, of this format,
    /// and holds at least the commits before the journal's first line; else built, from the
    /// snapshot an older version kept (`index.jsonl`, removed once built) when it is the
    /// journal's base, or from the record files. Read-only, a file that cannot be opened is
    /// built in memory.
    private static func openBase(
        _ layout: DatabaseLayout, databaseID: String, journal: JournalFile, writable: Bool
    ) throws(RecordStoreError) -> MetadataIndexFile {
        if writable { try Sys.mkdir(layout.indexes) }
        var (base, reason) = MetadataIndexFile.open(path: layout.metadataIndex, databaseID: databaseID, writable: writable)
        if let opened = base, opened.header.seq < journal.baseSeq {
            reason = "it holds commit \(opened.header.seq), the journal starts after \(journal.baseSeq)"
            base = nil
        }
        if let base { return base }
        if let reason { notice("\(layout.metadataIndex): \(reason); it is rebuilt") }
        var index: RecordIndex
        var snapshot: (RecordIndex, Snapshot.Header, bytes: Int)?
        do {
            snapshot = try Snapshot.load(from: layout.snapshot)
        } catch {
            notice("\(error); the index is rebuilt from the record files")
        }
        if let (loaded, header, _) = snapshot, header.seq == journal.baseSeq {
            index = loaded
        } else if journal.baseSeq == 0, snapshot == nil, reason == nil {
            index = RecordIndex()  // a new database
        } else {
            index = rebuildIndex(layout)
            index.seq = journal.baseSeq
        }
        let progress = buildProgress(index.entries.count)
        guard writable else {
            return try MetadataIndexFile.build(path: nil, databaseID: databaseID, from: index, temp: "", progress: progress)
        }
        do {
            let built = try MetadataIndexFile.build(
                path: layout.metadataIndex, databaseID: databaseID, from: index, temp: RecordFiles.tempPath(layout), progress: progress)
            if snapshot != nil { try? Sys.unlink(layout.snapshot) }
            return built
        } catch {
            // No room for the file (a full disk): this process reads one built in memory; the next open builds the file.
            guard error.isOutOfSpace || { if case .io = error { true } else { false } }() else { throw error }
            notice("\(layout.metadataIndex): \(error); the index is kept in memory until there is room")
            return try MetadataIndexFile.build(path: nil, databaseID: databaseID, from: index, temp: "", progress: nil)
        }
    }

    /// Progress of reading every record file, on a terminal (standard error): every 10,000 files.
    struct ScanProgress {
        private let shown = isatty(2) == 1
        private var files = 0

        mutating func read(found: Int) {
            files += 1
            guard shown, files % 10_000 == 0 else { return }
            FileHandle.standardError.write(Data("\rnotesfs: read \(files) record files, \(found) records".utf8))
        }

        func end() {
            if shown, files >= 10_000 { FileHandle.standardError.write(Data([0x0A])) }
        }
    }

    /// Progress of a first index build on a terminal (standard error), every 10,000 records.
    static func buildProgress(_ total: Int) -> ((Int) -> Void)? {
        guard total >= 10_000, isatty(2) == 1 else { return nil }
        notice("building the record index of \(total) records (once)")
        return { done in
            FileHandle.standardError.write(
                Data("\rnotesfs: indexed \(done) of \(total) records".utf8 + (done + 10_000 > total ? [0x0A] : [])))
        }
    }

    /// Makes the record files match one journal entry (idempotent). With `verify`, files that
    /// already hold the entry's bytes are left alone (recovery); without, every file is written
    /// (a commit).
    ///
    /// Record files are overwritten in place, not by temp file + rename: the journal line is
    /// written first and every line since the last checkpoint is redone at open, so a torn
    /// record file (crash or power loss mid-write) is always repaired from the journal; and the
    /// checkpoint fsyncs the files (syncfs) before it drops those lines. Readers that meet a
    /// half-written file re-read it under the commit lock (``readRecordFile(_:)``).
    /// Temp + rename per save would create and delete an inode per commit, which ext4 makes slow.
    ///
    /// Returns the names of the records whose file a commit wrote although their save does not
    /// call for one (``Record/savesRecordFile``): records of small fields only that had no file yet
    /// (a new record always gets its file, so a damaged journal can never make a record vanish).
    @discardableResult
    static func redo(_ entry: JournalEntry, layout: DatabaseLayout, verify: Bool) throws(RecordStoreError) -> [String] {
        for id in entry.deletes { try Sys.unlink(layout.recordPath(id.recordName)) }
        // Other saves leave an existing file as it is until it is rewritten
        // (``RecordIndex/staleRecordFiles``); reads merge it with the index meanwhile (``readRecordFile(_:)``).
        var written: [String] = []
        for (i, record) in entry.saves.enumerated() where !record.isPartial {
            let path = layout.recordPath(record.recordID.recordName)
            // At a commit, an existing file of a record of small fields only is left lagging; when
            // verifying (recovery, another process's last commit) it is compared like any other, so
            // that a file torn by a crash mid-write is repaired.
            if !record.savesRecordFile, !verify {
                guard try Sys.fileStatus(path) == nil else { continue }
                written.append(record.recordID.recordName)
            }
            let encoded = entry.encodedSaves?[i] ?? RecordCoding.encode(record)
            // The encoding is deterministic: equal bytes mean the file is already this version.
            if verify, let data = try? Sys.readFile(path, limit: DatabaseLayout.recordFileLimit), data.count == encoded.count,
                data == Data(encoded)
            {
                continue
            }
            try Sys.overwriteFile(path, encoded)
        }
        return written
    }

    // MARK: Background work

    /// Lagging record files the background thread rewrites every 250 ms (the rest wait for the checkpoint).
    static let staleFilesPerTick = 256

    /// Every 250 ms: other processes' commits, lagging record files; every second: a sync
    /// when there is something to make durable, and the space reserve; once the journal has not
    /// changed for ``quietCheckpointTicks`` rounds, a checkpoint if it is long.
    private func startBackgroundWork() {
        background.start { [weak self] worker in
            var ticks = 0
            var journal: (generation: UInt64, size: Int) = (0, 0)
            var quietTicks = 0
            while worker.next() != nil {
                guard let database = self else { return }
                ticks += 1
                try? database.refresh()
                try? database.refreshWholeRecordFiles(limit: Self.staleFilesPerTick)
                if ticks % 4 == 0 {
                    try? database.syncIfDirty()
                    if !database.isReadOnly { Self.ensureSpaceReserve(database.layout) }
                }
                let now = database.state.withLock { ($0.journal.generation, $0.journal.size) }
                quietTicks = now == journal ? quietTicks + 1 : 0
                journal = now
                if quietTicks == Self.quietCheckpointTicks { database.checkpointIfLong() }
            }
        }
    }

    func log(_ problem: String) {
        problemLog.withLock { log in
            log.append(problem)
            if log.count > 1000 { log.removeFirst(500) }
        }
        FileHandle.standardError.write(Data("notesfs: \(problem)\n".utf8))
    }

    /// Problems met while serving reads (damaged record files), most recent last.
    public var recentProblems: [String] { problemLog.withLock { $0 } }
}

/// Mutable state of an open database, guarded by ``RecordDatabase/state``.
struct DatabaseState: ~Copyable {
    let lockFD: Int32
    var index: RecordIndex
    var journal: JournalFile
    /// Whether the journal has lines not yet fsynced.
    var dirty = false
    /// Whether this process has committed since it opened the database.
    var hasCommitted = false
    /// Asset files written since the last sync.
    var unsyncedAssets: [String] = []
    /// Assets this process made and has not saved yet: SHA-256 → pin path in `tmp/` (see ``RecordDatabase/makeAsset(_:)``).
    var pins: [String: String] = [:]
    /// Assets this process's commits left unused: unlinked at the next sync if still unused.
    var collectable: Set<String> = []
    /// Identities reserved by this process and not handed out yet.
    var reservedIdentities: Range<UInt64> = 0..<0
    /// The last journal entry read from another process, whose record files are not yet checked.
    var unverifiedForeignEntry: JournalEntry?
    /// Record files a full disk kept from being written, by record name: their records are read
    /// from the journal until they are (``RecordDatabase/retryUnwrittenRecordFiles(_:)``).
    var unwrittenRecordFiles: [String: UnwrittenRecordFile] = [:]
    /// After a checkpoint failed (a full disk, say): the journal generation and size before which
    /// no other is tried, so that a lasting failure costs one attempt per ``RecordDatabase/checkpointMinimum``
    /// of commits, not one per commit.
    var checkpointRetry: (generation: UInt64, size: Int)?
    /// When this process last found the space reserve in place (nil: not since it released it): a
    /// commit that deletes nothing looks again after a second only.
    var spaceReserveSeenAt: ContinuousClock.Instant?
    /// The background checkpoint under way (``RecordDatabase/startCheckpoint(_:)``), if any:
    /// ended (set to nil) by any other checkpoint and by a reload, after which it is dropped.
    var pendingCheckpoint: PendingCheckpoint? {
        didSet {
            carriedEntries = pendingCheckpoint == nil ? nil : []
            carriedBytes = 0
        }
    }
    /// The journal entries applied since ``pendingCheckpoint`` started (this process's commits and
    /// others'), for its last step to apply again over the file without reading them back from
    /// the journal; nil when none is under way, or when they came to more than
    /// ``RecordDatabase/carriedLimit`` bytes (then they are read back).
    var carriedEntries: [JournalEntry]?
    var carriedBytes = 0
    /// How many ``RecordDatabase/holdingOffOtherWriters(_:)`` calls of this process hold the commit
    /// lock now: while any does, commits, catch-ups and checkpoints of this process do not take it
    /// again (``RecordDatabase/lockCommits(_:shared:)``), nor wait for it through a descriptor of
    /// their own (``RecordDatabase/whileNoCommitWrites(_:)``).
    var commitLockHolds = 0
}

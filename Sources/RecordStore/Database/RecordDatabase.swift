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
public final class RecordDatabase: Sendable {
    public let path: String
    /// Identifies this database in change tokens.
    public let databaseID: String
    let layout: DatabaseLayout
    let state: Mutex<DatabaseState>
    let observers = Mutex<[UInt64: @Sendable (RecordStoreChange) -> Void]>([:])
    let nextObserverID = Atomic<UInt64>(1)
    let background = Atomic<Bool>(true)
    /// Problems met while reading (damaged files), for logs and fsck.
    let problemLog = Mutex<[String]>([])

    /// Opens (creating when `create` and absent) the database at `path`, running crash recovery.
    ///
    /// - Throws: ``RecordStoreError/notADatabase(path:reason:)`` when the directory is missing or
    ///   holds something else, ``RecordStoreError/unsupportedFormat(found:supported:)`` for a newer
    ///   format, ``RecordStoreError/io(path:operation:errno:)`` on I/O failure.
    public init(path: String, create: Bool = true, backgroundThread: Bool = true) throws(RecordStoreError) {
        let layout = DatabaseLayout(root: path)
        self.layout = layout
        self.path = layout.root
        self.databaseID = try Self.prepareDirectory(layout, create: create)
        let lockFD = try Sys.open(layout.lockFile, O_RDWR | O_CREAT)
        do throws(RecordStoreError) {
            try Sys.lock(lockFD, path: layout.lockFile)
            defer { Sys.unlock(lockFD) }
            let recovered = try Self.recover(layout)
            state = Mutex(DatabaseState(lockFD: lockFD, index: recovered.index, journal: recovered.journal, snapshotBytes: recovered.snapshotBytes))
        } catch {
            Sys.close(lockFD)
            throw error
        }
        if backgroundThread { startBackgroundThread() }
    }

    /// The default database location: `$XDG_DATA_HOME/notesfs`, else `~/.local/share/notesfs`.
    public static var defaultPath: String {
        let env = ProcessInfo.processInfo.environment
        if let xdg = env["XDG_DATA_HOME"], xdg.hasPrefix("/") { return xdg + "/notesfs" }
        let home = env["HOME"] ?? NSHomeDirectory()
        return home + "/.local/share/notesfs"
    }

    deinit {
        background.store(false, ordering: .relaxed)
        state.withLock { state in
            try? state.journal.sync()
            state.journal.close()
            Sys.close(state.lockFD)
        }
    }

    /// Stops the background thread and makes everything durable.
    public func close() throws(RecordStoreError) {
        background.store(false, ordering: .relaxed)
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

    private static func prepareDirectory(_ layout: DatabaseLayout, create: Bool) throws(RecordStoreError) -> String {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: layout.root, isDirectory: &isDirectory) {
            guard create else { throw .notADatabase(path: layout.root, reason: "no such directory") }
            do {
                try FileManager.default.createDirectory(atPath: layout.root, withIntermediateDirectories: true)
            } catch {
                throw .io(path: layout.root, operation: "mkdir", errno: EACCES)
            }
        } else if !isDirectory.boolValue {
            throw .notADatabase(path: layout.root, reason: "not a directory")
        }
        if let data = try Sys.readFile(layout.formatFile) {
            guard let json = try? JSON.parse(data), let format = json["format"]?.int64, let id = json["databaseID"]?.string else {
                throw .notADatabase(path: layout.root, reason: "notesfs.json is damaged")
            }
            guard format <= DatabaseLayout.formatVersion else {
                throw .unsupportedFormat(found: Int(format), supported: DatabaseLayout.formatVersion)
            }
            return id
        }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: layout.root)) ?? []
        // Only our own files (a creation interrupted before notesfs.json was written) may be there.
        let ours: Set<String> = ["lock", "records", "assets", "tmp", "journal.jsonl"]
        guard entries.allSatisfy({ ours.contains($0) || $0.hasPrefix(".") }) else {
            throw .notADatabase(path: layout.root, reason: "directory is not empty and has no notesfs.json")
        }
        let id = UUID().uuidString
        for dir in [layout.records, layout.assets, layout.temp] { try Sys.mkdir(dir) }
        for shard in 0..<256 { try Sys.mkdir(layout.records + "/" + String(format: "%02x", shard)) }
        try JournalFile.create(path: layout.journal, temp: layout.temp + "/journal.new", generation: 0, baseSeq: 0)
        let format = "{\"format\":\(DatabaseLayout.formatVersion),\"databaseID\":\"\(id)\"}\n"
        try Sys.writeFileAtomically(layout.formatFile, Array(format.utf8), temp: layout.temp + "/notesfs.json.new", durable: true)
        return id
    }

    /// Crash recovery, with the commit lock held: load the snapshot (or rebuild it from the record
    /// files), replay the journal, cut a torn last line, and redo record files the journal holds.
    private static func recover(_ layout: DatabaseLayout) throws(RecordStoreError) -> (index: RecordIndex, journal: JournalFile, snapshotBytes: Int) {
        try Sys.mkdir(layout.temp)
        if let leftovers = try? FileManager.default.contentsOfDirectory(atPath: layout.temp) {
            for name in leftovers { try Sys.unlink(layout.temp + "/" + name) }
        }
        if try Sys.fileStatus(layout.journal) == nil {
            try JournalFile.create(path: layout.journal, temp: layout.temp + "/journal.new", generation: 0, baseSeq: 0)
        }
        var journal = try JournalFile(path: layout.journal)
        var index: RecordIndex
        var snapshotBytes = 0
        if let (loaded, _, bytes) = try Snapshot.load(from: layout.snapshot) {
            index = loaded
            snapshotBytes = bytes
        } else if journal.baseSeq == 0 {
            index = RecordIndex()
        } else {
            index = try rebuildIndex(layout)
        }
        let damage = try journal.readEntries { (entry) throws(RecordStoreError) in
            guard entry.seq > index.seq else { return }
            index.apply(entry)
            try redo(entry, layout: layout, verify: true)
        }
        if let damage {
            // A complete line that does not parse: power loss garbage at the tail. Keep the bytes aside.
            let rest = try Sys.pread(journal.fd, count: journal.trailingBytes, offset: journal.offset, path: layout.journal)
            try? Sys.writeFileAtomically(layout.root + "/journal.damaged-\(Int(Date().timeIntervalSince1970))", rest, temp: layout.temp + "/damaged.new", durable: true)
            FileHandle.standardError.write(Data("notesfs: \(damage); the rest of the journal was moved aside\n".utf8))
        }
        try journal.truncateTail()
        return (index, journal, snapshotBytes)
    }

    /// Rebuilds the index by reading every record file (when the snapshot is lost).
    static func rebuildIndex(_ layout: DatabaseLayout) throws(RecordStoreError) -> RecordIndex {
        var index = RecordIndex()
        for (_, result) in RecordFiles.scan(layout) {
            if case .success(let record) = result {
                index.insert(RecordMetadata(fullRecord: record, seq: 0))
            }
        }
        return index
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
    static func redo(_ entry: JournalEntry, layout: DatabaseLayout, verify: Bool) throws(RecordStoreError) {
        for id in entry.deletes { try Sys.unlink(layout.recordPath(id.recordName)) }
        for (i, record) in entry.saves.enumerated() {
            let path = layout.recordPath(record.recordID.recordName)
            let encoded = entry.encodedSaves?[i] ?? RecordCoding.encode(record)
            // The encoding is deterministic: equal bytes mean the file is already this version.
            if verify, let data = try Sys.readFile(path), data.count == encoded.count, data == Data(encoded) { continue }
            try Sys.overwriteFile(path, encoded)
        }
    }

    // MARK: Background work

    private func startBackgroundThread() {
        let thread = Thread { [weak self] in
            var ticks = 0
            while true {
                usleep(250_000)
                guard let database = self, database.background.load(ordering: .relaxed) else { return }
                ticks += 1
                try? database.refresh()
                if ticks % 4 == 0 { try? database.syncIfDirty() }
            }
        }
        thread.name = "notesfs.store"
        thread.start()
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
    var snapshotBytes: Int
    /// Whether the journal has lines not yet fsynced.
    var dirty = false
    /// Asset files written since the last sync.
    var unsyncedAssets: [String] = []
    /// Identities reserved by this process and not handed out yet.
    var reservedIdentities: Range<UInt64> = 0..<0
    /// The last journal entry read from another process, whose record files are not yet checked.
    var unverifiedForeignEntry: JournalEntry?
}

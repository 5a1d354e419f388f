import Foundation
import SQLite

/// A point in a database's history, as `CKServerChangeToken`. Opaque; persist ``stringValue``.
public struct ChangeToken: Sendable, Hashable, CustomStringConvertible {
    let databaseID: String
    let seq: UInt64

    public var stringValue: String { "\(databaseID):\(seq)" }
    public var description: String { stringValue }

    public init?(stringValue: String) {
        guard let colon = stringValue.lastIndex(of: ":"), let seq = UInt64(stringValue[stringValue.index(after: colon)...]) else {
            return nil
        }
        databaseID = String(stringValue[..<colon])
        self.seq = seq
    }

    /// Whether this token is of the same database as `other` and later.
    public func isNewer(than other: ChangeToken) -> Bool { databaseID == other.databaseID && seq > other.seq }

    init(databaseID: String, seq: UInt64) {
        self.databaseID = databaseID
        self.seq = seq
    }
}

/// What one commit (this process's or another's) changed, delivered to observers.
public struct RecordStoreChange: Sendable {
    /// Saved records' metadata (small fields only; fetch for large ones).
    public var saved: [RecordMetadata]
    /// Deleted records' last metadata, cascades included.
    public var deleted: [RecordMetadata]
    /// Whether another process committed it, or a writer of this process that said so
    /// (`modify(…, asExternalChange: true)`).
    public var isExternal: Bool
    /// Whether the whole index was reloaded: observers should drop everything they cached.
    public var isReset: Bool
    /// The token after this change.
    public var token: ChangeToken
}

/// Records changed and deleted since a token, as `CKFetchRecordZoneChangesOperation` reports.
public struct ChangeSet: Sendable {
    public var changed: [RecordMetadata]
    public var deleted: [RecordID]
    public var token: ChangeToken
}

extension RecordDatabase {
    /// The token for the current state.
    public var currentToken: ChangeToken {
        ChangeToken(databaseID: databaseID, seq: state.withLock { $0.index.seq })
    }

    /// Records changed (saved) and deleted since `token`; nil means from the beginning.
    ///
    /// - Throws: ``RecordStoreError/changeTokenExpired`` for a token of another database or older
    ///   than the retained history; fetch everything again then.
    public func changes(since token: ChangeToken?) throws(RecordStoreError) -> ChangeSet {
        try refresh()
        return try state.withLock { (state) throws(RecordStoreError) -> ChangeSet in
            let now = ChangeToken(databaseID: databaseID, seq: state.index.seq)
            guard let token else {
                return ChangeSet(changed: state.index.entries.values.sorted { $0.seq < $1.seq }, deleted: [], token: now)
            }
            guard token.databaseID == databaseID, token.seq >= state.index.tombstoneHorizon, token.seq <= state.index.seq else {
                throw .changeTokenExpired
            }
            let changed = state.index.entries.values(changedAfter: token.seq).sorted { $0.seq < $1.seq }
            var deleted: [RecordID] = []
            for tombstone in state.index.tombstones(after: token.seq) {
                if state.index.entries[tombstone.recordID.recordName].map({ $0.seq < tombstone.seq }) ?? true {
                    deleted.append(tombstone.recordID)
                }
            }
            return ChangeSet(changed: changed, deleted: Array(Set(deleted)).sorted(), token: now)
        }
    }

    /// Registers an observer of every committed change; returns an ID for ``removeObserver(_:)``.
    ///
    /// The handler runs on the committing thread (or the store's background thread for other
    /// processes' commits), after the commit, with no store lock held. Keep it short.
    @discardableResult
    public func addObserver(_ handler: @escaping @Sendable (RecordStoreChange) -> Void) -> UInt64 {
        let id = nextObserverID.add(1, ordering: .relaxed).newValue
        observers.withLock { $0[id] = handler }
        return id
    }

    public func removeObserver(_ id: UInt64) {
        _ = observers.withLock { $0.removeValue(forKey: id) }
    }

    func notify(_ changes: [RecordStoreChange]) {
        guard !changes.isEmpty else { return }
        let handlers = observers.withLock { Array($0.values) }
        for change in changes {
            for handler in handlers { handler(change) }
        }
    }

    /// Reads other processes' commits now (the background thread also does, about 4 times a second).
    public func refresh() throws(RecordStoreError) {
        let changes = try state.withLock { (state) throws(RecordStoreError) -> [RecordStoreChange] in
            if state.index.entries.base?.isDamaged == true {
                try lockCommits(&state, shared: isReadOnly)
                defer { unlockCommits(state) }
                return try rebuildDamagedIndex(&state)
            }
            let replaced = try state.journal.isReplaced()
            if !replaced, try !state.journal.hasNewBytes() { return [] }
            return try catchUp(&state)
        }
        notify(changes)
    }

    /// Applies every journal line this process has not read (other processes' commits). When
    /// another process checkpointed, the old journal is read to its end, and the index file is
    /// read again as it is now, with the new journal's lines over it.
    func catchUp(_ state: inout DatabaseState) throws(RecordStoreError) -> [RecordStoreChange] {
        if state.index.entries.base?.isDamaged == true { return try rebuildDamagedIndex(&state) }
        let replaced = try state.journal.isReplaced()
        var changes = try applyNewEntries(&state)
        guard replaced else { return changes }
        let caughtUp = state.index.seq
        try reload(&state)
        if state.journal.baseSeq > caughtUp {
            // Commits this process never read (it fell behind more than one checkpoint).
            changes = [
                RecordStoreChange(
                    saved: [], deleted: [], isExternal: true, isReset: true,
                    token: ChangeToken(databaseID: databaseID, seq: state.index.seq))
            ]
        }
        // A background checkpoint's journal carries the commits made while it wrote the index
        // file (``startCheckpoint(_:)``): read already, from the old journal's end.
        return changes + (try applyNewEntries(&state)).filter { $0.isReset || $0.token.seq > caughtUp }
    }

    func applyNewEntries(_ state: inout DatabaseState) throws(RecordStoreError) -> [RecordStoreChange] {
        var changes: [RecordStoreChange] = []
        // Move the index out (no copy) while the closure updates it.
        var index = RecordIndex()
        swap(&index, &state.index)
        defer { swap(&index, &state.index) }
        var last: JournalEntry?
        var applied: [JournalEntry] = []
        let carrying = state.carriedEntries != nil
        let damage = try state.journal.readEntries { entry in
            guard entry.seq > index.seq else { return }
            let deleted = index.apply(entry)
            if carrying { applied.append(entry) }
            let saved = entry.saves.compactMap { index.entries[$0.recordID.recordName] }
            changes.append(
                RecordStoreChange(
                    saved: saved, deleted: deleted, isExternal: true, isReset: false,
                    token: ChangeToken(databaseID: databaseID, seq: entry.seq)))
            last = entry
        } damaged: { line in
            log("journal line at byte \(line.offset) could not be read (\(line.reason)); skipped")
        }
        if let damage { log(damage) }
        if let last { state.unverifiedForeignEntry = last }
        for entry in applied { state.carry(entry) }
        return changes
    }

    /// Builds the index file again from the record files and the journal, after a read found it
    /// damaged (logged with what the reads met); observers hear of a reset. Called with the
    /// commit lock held (shared, read-only).
    func rebuildDamagedIndex(_ state: inout DatabaseState) throws(RecordStoreError) -> [RecordStoreChange] {
        state.pendingCheckpoint = nil  // its overlay is not over this file
        for failure in state.index.entries.base?.takeFailures() ?? [] { log(failure) }
        _ = try applyNewEntries(&state)
        var rebuilt = Self.rebuildIndex(layout)
        rebuilt.seq = state.journal.baseSeq
        var journal = try JournalFile(path: layout.journal, writable: false)
        defer { journal.close() }
        _ = try journal.readEntries { entry in
            if entry.seq > rebuilt.seq { rebuilt.apply(entry) }
        } damaged: { _ in
        }
        let file = try MetadataIndexFile.build(
            path: isReadOnly ? nil : layout.metadataIndex, databaseID: databaseID, from: rebuilt, temp: RecordFiles.tempPath(layout))
        log("\(file.path): the record index was damaged; it was rebuilt from the record files and the journal")
        let stale = rebuilt.staleRecordFiles
        state.index = state.index.emptied(over: file)
        state.index.staleRecordFiles = stale
        return [
            RecordStoreChange(
                saved: [], deleted: [], isExternal: true, isReset: true, token: ChangeToken(databaseID: databaseID, seq: state.index.seq))
        ]
    }

    /// Reads the index file again as the current journal's base (another process checkpointed):
    /// the journal is opened again, the index file's read transaction started again, and the
    /// overlay emptied. Retried when a checkpoint slipped in between the two.
    ///
    /// `forgetting`: the only records whose rows may differ from what the index file's connection
    /// decoded before (``MetadataIndexFile/pin(forgetting:copyingLog:)``); nil: any may.
    /// `copyingLog` false: the file's log is left for the caller to copy, with no lock held.
    func reload(_ state: inout DatabaseState, forgetting changed: Set<String>? = nil, copyingLog: Bool = true) throws(RecordStoreError) {
        state.pendingCheckpoint = nil
        guard var base = state.index.entries.base else { throw .damagedRecord(nil, path: layout.journal, reason: "no record index") }
        for attempt in 0..<10 {
            let journal = try JournalFile(path: layout.journal, writable: !isReadOnly)
            if base.path != layout.metadataIndex {
                // Built in memory (no room for the file, or a read-only database): the file another process wrote.
                guard let file = MetadataIndexFile.open(path: layout.metadataIndex, databaseID: databaseID, writable: !isReadOnly).0 else {
                    journal.close()
                    throw .damagedRecord(nil, path: layout.metadataIndex, reason: "the record index another process wrote cannot be read")
                }
                base = file
            }
            do throws(SQLiteError) {
                try base.pin(forgetting: attempt == 0 ? changed : nil, copyingLog: copyingLog)
            } catch {
                journal.close()
                throw MetadataIndexFile.storeError(error, path: base.path)
            }
            guard base.header.seq == journal.baseSeq else {
                journal.close()
                continue
            }
            state.journal.close()
            state.journal = journal
            // The checkpoint that started this journal rewrote every record file lagging at its base.
            let lagging = state.index.staleRecordFiles.filter { (state.index.entries.overlayValue($0)?.seq ?? 0) > base.header.seq }
            state.index = state.index.emptied(over: base)
            state.index.staleRecordFiles = lagging
            return
        }
        throw .damagedRecord(nil, path: layout.journal, reason: "journal and record index do not match")
    }
}

import Foundation

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
            let changed = state.index.entries.values.filter { $0.seq > token.seq }.sorted { $0.seq < $1.seq }
            var deleted: [RecordID] = []
            for tombstone in state.index.tombstones.reversed() {
                if tombstone.seq <= token.seq { break }
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
            let replaced = try state.journal.isReplaced()
            if !replaced, try !state.journal.hasNewBytes() { return [] }
            return try catchUp(&state)
        }
        notify(changes)
    }

    /// Applies every journal line this process has not read (other processes' commits).
    func catchUp(_ state: inout DatabaseState) throws(RecordStoreError) -> [RecordStoreChange] {
        let replaced = try state.journal.isReplaced()
        var changes = try applyNewEntries(&state)
        if replaced {
            let next = try JournalFile(path: layout.journal, writable: !isReadOnly)
            // Read to its end, the old journal holds every commit up to the new one's base (a
            // background checkpoint's journal carries the lines after its base: they are skipped).
            if next.baseSeq <= state.index.seq {
                state.journal.close()
                state.journal = next
                state.endCheckpoint()  // another process checkpointed first
                // The checkpoint that started it rewrote every record file lagging at its base.
                let base = next.baseSeq
                state.index.staleRecordFiles = state.index.staleRecordFiles.filter { (state.index.entries[$0]?.seq ?? 0) > base }
                changes += try applyNewEntries(&state)
            } else {
                next.close()
                try reload(&state)
                changes = [
                    RecordStoreChange(
                        saved: [], deleted: [], isExternal: true, isReset: true,
                        token: ChangeToken(databaseID: databaseID, seq: state.index.seq))
                ]
            }
        }
        return changes
    }

    private func applyNewEntries(_ state: inout DatabaseState) throws(RecordStoreError) -> [RecordStoreChange] {
        var changes: [RecordStoreChange] = []
        // Move the index out (no copy) while the closure updates it.
        var index = RecordIndex()
        swap(&index, &state.index)
        defer { swap(&index, &state.index) }
        var last: JournalEntry?
        let damage = try state.journal.readEntries { entry in
            guard entry.seq > index.seq else { return }
            let deleted = index.apply(entry)
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
        return changes
    }

    /// Reloads the whole index (this process fell behind more than one checkpoint).
    private func reload(_ state: inout DatabaseState) throws(RecordStoreError) {
        // Snapshot and journal are each replaced by rename, so they can be read without the lock;
        // retry when a checkpoint slipped in between the two reads.
        for _ in 0..<10 {
            guard let loaded = try Snapshot.load(from: layout.snapshot) else {
                throw .damagedRecord(nil, path: layout.snapshot, reason: "index snapshot is missing after a checkpoint")
            }
            var index = loaded.0
            let (header, bytes) = (loaded.1, loaded.bytes)
            let journal = try JournalFile(path: layout.journal, writable: !isReadOnly)
            guard journal.baseSeq == header.seq else {
                journal.close()
                continue
            }
            state.journal.close()
            state.journal = journal
            state.snapshotBytes = bytes
            var last: JournalEntry?
            let damage = try state.journal.readEntries { entry in
                guard entry.seq > index.seq else { return }
                index.apply(entry)
                last = entry
            }
            state.endCheckpoint()  // its earlier metadata went with the old index
            for field in state.index.fieldIndexes.keys { index.addFieldIndex(field) }
            state.index = index
            if let damage { log(damage) }
            state.unverifiedForeignEntry = last
            return
        }
        throw .damagedRecord(nil, path: layout.journal, reason: "journal and index snapshot do not match")
    }
}

import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Checkpoints: what the journal holds is written into the metadata index
/// (``MetadataIndexFile``) and the journal is started afresh.
///
/// A commit that finds the journal over ``checkpointMinimum`` checkpoints before it returns,
/// with both locks held. The cost follows the journal, not the database: the record files the
/// journal's lines wrote are made durable (`syncfs`), the lagging ones rewritten, the records
/// those lines changed written into the index file in one SQLite transaction (its commit
/// fsynced), and a new journal generation whose base is that commit replaces the old one.
///
/// A crash at any point leaves an index file and a journal that together hold every commit:
/// before the index's transaction commits, the old index and the old journal; after it, the new
/// index and the old journal, whose lines up to the index's commit are skipped at open; after
/// the journal's rename, the new pair. Another process finds the journal replaced, reads the old
/// one to its end and then reads the index file as the new journal's base holds it
/// (``RecordDatabase/catchUp(_:)``).
extension RecordDatabase {
    static let checkpointMinimum = 1 << 20
    /// A journal longer than this is checkpointed once its writers are done or quiet: at
    /// ``close()`` of a process that committed, and by the background thread after
    /// ``quietCheckpointTicks`` without a new line. Every open replays the journal, so this bounds
    /// what an open reads after a burst of saves (``checkpointMinimum`` bounds it meanwhile).
    static let quietCheckpointMinimum = 64 << 10
    /// Background rounds (250 ms each) with the journal unchanged before a quiet checkpoint.
    static let quietCheckpointTicks = 8

    /// Forces a checkpoint now, in the caller's thread (tests and `fsck` use it).
    public func checkpoint() throws(RecordStoreError) {
        guard !isReadOnly else { throw .readOnly(path: path) }
        let changes = try state.withLock { (state) throws(RecordStoreError) -> [RecordStoreChange] in
            try lockCommits(&state)
            defer { unlockCommits(state) }
            let changes = try catchUp(&state)
            try checkpoint(&state)
            return changes
        }
        notify(changes)
    }

    /// Checkpoints when the journal, once caught up, is over ``quietCheckpointMinimum`` (and no
    /// failed checkpoint asks to wait). A failure is logged and waited out as a commit's is:
    /// nothing is lost, the journal stays the truth.
    func checkpointIfLong() {
        guard !isReadOnly, state.withLock({ $0.wantsCheckpoint(over: Self.quietCheckpointMinimum) }) else { return }
        let changes = state.withLock { (state) -> [RecordStoreChange] in
            do throws(RecordStoreError) {
                try lockCommits(&state)
            } catch {
                log("checkpoint: \(error)")
                return []
            }
            defer { unlockCommits(state) }
            do throws(RecordStoreError) {
                let changes = try catchUp(&state)
                // Another process may have checkpointed meanwhile.
                if state.wantsCheckpoint(over: Self.quietCheckpointMinimum) { try checkpoint(&state) }
                return changes
            } catch {
                checkpointFailed(error, state: &state)
                return []
            }
        }
        notify(changes)
    }

    /// Makes everything durable, writes the journal's changes into the index file and starts a
    /// new journal generation. Called with the commit lock held and the index caught up.
    func checkpoint(_ state: inout DatabaseState) throws(RecordStoreError) {
        try writeUnwrittenRecordFiles(&state)
        refreshWholeRecordFiles(&state)
        try refreshPartialRecordFiles(&state)
        try Sys.syncfs(state.lockFD, path: layout.root)
        // Only into the file every process reads (not one built in memory for want of room).
        guard let base = state.index.entries.base, base.path == layout.metadataIndex else {
            throw .io(path: layout.metadataIndex, operation: "checkpoint into the record index", errno: ENOSPC)
        }
        _ = try base.write(state.index)
        guard base.header.seq == state.index.seq else {
            throw .damagedRecord(
                nil, path: base.path, reason: "the record index holds commit \(base.header.seq), the journal \(state.index.seq)")
        }
        // The index file holds everything now: an empty overlay over it.
        state.index = state.index.emptied(over: base)
        let generation = state.journal.generation &+ 1  // from disk; a wrap only renames the generation
        try JournalFile.create(path: layout.journal, temp: RecordFiles.tempPath(layout), generation: generation, baseSeq: state.index.seq)
        let next = try JournalFile(path: layout.journal)
        state.journal.close()
        state.journal = next
        VerifiedMark.write(state.lockFD, generation: next.generation, offset: next.size)  // every file is durable
        state.dirty = false
        state.unsyncedAssets = []
        // Everything is durable (syncfs): what this process left unused and what crashes left can go.
        collectAssets(&state)
        _ = sweepOrphans(&state, olderThan: Self.assetGracePeriod)
    }

    /// Logs a checkpoint's failure; the next is tried once the journal has grown by another
    /// ``checkpointMinimum`` (or been replaced).
    func checkpointFailed(_ error: RecordStoreError, state: inout DatabaseState) {
        log("checkpoint: \(error)")
        state.checkpointRetry = (state.journal.generation, state.journal.size + Self.checkpointMinimum)
    }
}

extension RecordIndex {
    /// An index over `base` with nothing changed since it, keeping this one's lookup tables'
    /// fields and its lagging record files (those a checkpoint could not rewrite yet).
    func emptied(over base: MetadataIndexFile) -> RecordIndex {
        var index = RecordIndex(base: base)
        for field in fieldIndexes.keys { index.fieldIndexes[field] = [:] }
        index.staleRecordFiles = staleRecordFiles
        return index
    }
}

extension DatabaseState {
    /// Whether a commit should checkpoint: the journal is over ``RecordDatabase/checkpointMinimum``
    /// and no failure asks to wait.
    var wantsCheckpoint: Bool { wantsCheckpoint(over: RecordDatabase.checkpointMinimum) }

    /// Whether the journal is over `minimum` bytes and no failure asks to wait.
    func wantsCheckpoint(over minimum: Int) -> Bool {
        guard journal.size > minimum else { return false }
        guard let retry = checkpointRetry, retry.generation == journal.generation else { return true }
        return journal.size >= retry.size
    }
}

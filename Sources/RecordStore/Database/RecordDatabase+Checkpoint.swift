import Foundation
import SQLite

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
/// In a process with a background thread (the mount: ``checkpointsInBackground``) the commit
/// does only the first part, and the index file is written on a thread of its own
/// (``startCheckpoint(_:)``), so that the requests after it do not wait for SQLite's rows:
/// 1. At the commit (seq `S`), with both locks held: the record files are made durable and the
///    lagging ones rewritten, as above, and the index's tables are copied (``MetadataIndexFile/Rows``:
///    the overlay's arrays are shared until the next commit changes them).
/// 2. On the checkpoint's thread, with no lock held: the copy is written into the index file
///    through a connection of its own (the file is then at `S`, the journal's base still older:
///    the state a crash between the two writes always left, which every open reads right).
///    Commits go on meanwhile, into the old journal; readers read the file as they pinned it.
/// 3. With both locks held again: the journal is replaced by a new generation whose base is `S`
///    and which carries the lines of the commits made since
///    (``JournalFile/replace(_:carryingFrom:temp:generation:baseSeq:)``), and the index is read
///    again over the file at `S` with those commits applied (from memory, or read back).
/// Another process's checkpoint meanwhile, or any checkpoint of this one, drops it.
///
/// A crash at any point leaves an index file and a journal that together hold every commit:
/// before the index's transaction commits, the old index and the old journal; after it, the new
/// index and the old journal, whose lines up to the index's commit are skipped at open; after
/// the journal's rename, the new pair. Another process finds the journal replaced, reads the old
/// one to its end and then reads the index file as the new journal's base holds it
/// (``RecordDatabase/catchUp(_:)``), skipping the carried lines it read in the old one.
extension RecordDatabase {
    static let checkpointMinimum = 1 << 20
    /// The bytes of records a background checkpoint keeps decoded for its last step
    /// (``DatabaseState/carriedEntries``); past it, that step reads them back from the journal.
    static let carriedLimit = 8 << 20
    /// A journal longer than this is checkpointed once its writers are done or quiet: at
    /// ``close()`` of a process that committed, and by the background thread after
    /// ``quietCheckpointTicks`` without a new line. Every open replays the journal, so this bounds
    /// what an open reads after a burst of saves (``checkpointMinimum`` bounds it meanwhile).
    static let quietCheckpointMinimum = 64 << 10
    /// Background rounds (250 ms each) with the journal unchanged before a quiet checkpoint.
    static let quietCheckpointTicks = 8

    /// Forces a checkpoint now, in the caller's thread (tests and `fsck` use it), after the
    /// background one under way, if any.
    public func checkpoint() throws(RecordStoreError) {
        guard !isReadOnly else { throw .readOnly(path: path) }
        waitForCheckpoint()
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
        waitForCheckpoint()
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
    /// new journal generation (a background checkpoint under way is dropped). Called with the
    /// commit lock held and the index caught up.
    func checkpoint(_ state: inout DatabaseState) throws(RecordStoreError) {
        state.pendingCheckpoint = nil
        let base = try makeDurable(&state)
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
        // Everything is durable (syncfs): what this process left unused and what crashes left can go.
        collectAssets(&state)
        _ = sweepOrphans(&state, olderThan: Self.assetGracePeriod)
    }

    /// The first part of every checkpoint: the record files the journal's lines wrote are made
    /// durable (those a full disk kept unwritten written, the lagging ones rewritten, `syncfs`,
    /// which makes the journal and the assets written durable too). Returns the index file to
    /// write into: only the file every process reads, not one built in memory for want of room.
    private func makeDurable(_ state: inout DatabaseState) throws(RecordStoreError) -> MetadataIndexFile {
        try writeUnwrittenRecordFiles(&state)
        refreshWholeRecordFiles(&state)
        try refreshPartialRecordFiles(&state)
        try Sys.syncfs(state.lockFD, path: layout.root)
        state.dirty = false
        state.unsyncedAssets = []
        guard let base = state.index.entries.base, base.path == layout.metadataIndex else {
            throw .io(path: layout.metadataIndex, operation: "checkpoint into the record index", errno: ENOSPC)
        }
        return base
    }

    /// A commit's checkpoint: in the background where this process has a background thread
    /// (``startCheckpoint(_:)``), unless one is under way; else before the commit returns.
    /// Called with the commit lock held and the index caught up.
    func checkpointAfterCommit(_ state: inout DatabaseState) throws(RecordStoreError) {
        guard checkpointsInBackground else { return try checkpoint(&state) }
        if state.pendingCheckpoint == nil { try startCheckpoint(&state) }
    }

    /// Step 1 of a background checkpoint (this type's description): makes everything durable,
    /// copies the index's tables and starts the thread that writes them. Called with the commit
    /// lock held and the index caught up.
    func startCheckpoint(_ state: inout DatabaseState) throws(RecordStoreError) {
        let base = try makeDurable(&state)
        let started = PendingCheckpoint(
            id: nextCheckpointID.add(1, ordering: .relaxed).newValue, seq: state.index.seq, generation: state.journal.generation,
            journalOffset: state.journal.size)
        let rows = MetadataIndexFile.Rows(state.index)
        let readAt = base.header.seq
        state.pendingCheckpoint = started
        // The thread holds the database until it is done: `close()` joins it, `deinit` comes after.
        let worker = BackgroundWorker.start(name: "notesfs.checkpoint") { [self] _ in
            finishCheckpoint(started, rows: rows, over: readAt)
        }
        checkpointWorkers.withLock { workers in
            workers.removeAll { $0.join(until: .now) }
            workers.append(worker)
        }
    }

    /// Waits for the background checkpoints this process started, if any is under way. Called
    /// with no lock of this database held (the checkpoint's last step takes them).
    public func waitForCheckpoint() {
        for worker in checkpointWorkers.withLock({ $0 }) { worker.join() }
    }

    /// Steps 2 and 3 of a background checkpoint, on its thread.
    private func finishCheckpoint(_ started: PendingCheckpoint, rows: MetadataIndexFile.Rows, over readAt: UInt64) {
        let writer: MetadataIndexFile
        let outcome: (written: Bool, onlyOurs: Bool)
        do throws(RecordStoreError) {
            let (opened, reason) = MetadataIndexFile.open(path: layout.metadataIndex, databaseID: databaseID, writable: true)
            guard let opened, opened.canWrite else {
                throw .damagedRecord(nil, path: layout.metadataIndex, reason: reason ?? "the record index cannot be written")
            }
            writer = opened
            outcome = try writer.writeCheckpoint(rows, over: readAt)
        } catch {
            dropCheckpoint(started, failure: error)
            return
        }
        guard outcome.written else {
            dropCheckpoint(started)  // another process's checkpoint came first: it replaces the journal
            return
        }
        if let pause = checkpointPause.withLock({ $0 }) { pause() }
        do {
            let (done, changes) = try state.withLock { (state) throws(RecordStoreError) -> (Bool, [RecordStoreChange]) in
                try lockCommits(&state)
                defer { unlockCommits(state) }
                let changes = try catchUp(&state)
                // Still this checkpoint's journal (no other checkpoint, no reload), and the file
                // still at its commit (a process killed between its own two writes leaves it later).
                guard state.pendingCheckpoint?.id == started.id, state.journal.generation == started.generation,
                    try !state.journal.isReplaced(), try writer.committedSeq() == started.seq
                else { return (false, changes) }
                // The lines of files a full disk kept from being written are not moved.
                try writeUnwrittenRecordFiles(&state)
                try startCarriedJournal(started, forgetting: outcome.onlyOurs ? rows.changedNames : nil, &state)
                return (true, changes)
            }
            notify(changes)
            if done {
                // The file's log into the file, now that this process reads the file at the checkpoint.
                writer.truncateLog()
                return
            }
        } catch {
            dropCheckpoint(started, failure: error)
            return
        }
        dropCheckpoint(started)
    }

    /// Step 3's switch: the new journal, based at the checkpoint's commit, carrying the lines
    /// after it, and the index read again over the file with those lines applied. Called with
    /// both locks held and the index caught up.
    private func startCarriedJournal(
        _ started: PendingCheckpoint, forgetting changed: Set<String>?, _ state: inout DatabaseState
    ) throws(RecordStoreError) {
        let mark = VerifiedMark.read(state.lockFD)
        let carried = state.journal.size - started.journalOffset
        let stale = state.index.staleRecordFiles
        let next = try JournalFile.replace(
            state.journal, carryingFrom: started.journalOffset, temp: RecordFiles.tempPath(layout),
            generation: started.generation &+ 1, baseSeq: started.seq)
        let headerSize = next.size - carried
        // Lines carried are verified as far as they were in the old journal.
        let verified = mark.map { $0.generation == started.generation ? max(0, $0.offset - started.journalOffset) : 0 } ?? 0
        VerifiedMark.write(state.lockFD, generation: started.generation &+ 1, offset: headerSize + min(verified, carried))
        // This process applied the carried lines already, and its observers heard of them.
        var foreign = state.unverifiedForeignEntry
        if let entries = state.carriedEntries, entries.last?.seq ?? started.seq == state.index.seq {
            try reread(over: started.seq, forgetting: changed, journal: next, &state)
            for entry in entries { state.index.apply(entry) }
        } else {
            next.close()
            try reload(&state, forgetting: changed, copyingLog: false)
            _ = try applyNewEntries(&state)
        }
        if let offset = foreign?.lineOffset, let seq = foreign?.seq, seq > started.seq {
            foreign?.lineOffset = offset - started.journalOffset + headerSize  // where it was carried to
        }
        state.unverifiedForeignEntry = foreign
        // As a checkpoint in the commit keeps them: a file still lagging is rewritten again.
        state.index.staleRecordFiles.formUnion(stale)
        state.dirty = false  // the new journal was written durably
        collectAssets(&state)
        _ = sweepOrphans(&state, olderThan: Self.assetGracePeriod)
    }

    /// The index read again over the index file at `seq`, the journal `journal` (read to its
    /// end), the overlay emptied: the caller applies the lines after `seq` (``reload(_:forgetting:copyingLog:)``
    /// for the same with the journal read back). The file's log is left for the caller to copy.
    private func reread(
        over seq: UInt64, forgetting changed: Set<String>?, journal: JournalFile, _ state: inout DatabaseState
    ) throws(RecordStoreError) {
        guard let base = state.index.entries.base else {
            journal.close()
            throw .damagedRecord(nil, path: layout.journal, reason: "no record index")
        }
        do throws(SQLiteError) {
            try base.pin(forgetting: changed, copyingLog: false)
        } catch {
            journal.close()
            throw MetadataIndexFile.storeError(error, path: base.path)
        }
        guard base.header.seq == seq else {
            journal.close()
            throw .damagedRecord(nil, path: base.path, reason: "the record index holds commit \(base.header.seq), its checkpoint \(seq)")
        }
        state.pendingCheckpoint = nil
        state.journal.close()
        state.journal = journal
        state.index = state.index.emptied(over: base)
    }

    /// Forgets a background checkpoint that did not complete; the journal it would have replaced
    /// is untouched (the index file may hold its commit: opens and catch-ups read that right).
    private func dropCheckpoint(_ started: PendingCheckpoint, failure: RecordStoreError? = nil) {
        state.withLock { state in
            guard state.pendingCheckpoint?.id == started.id else { return }
            state.pendingCheckpoint = nil
            if let failure { checkpointFailed(failure, state: &state) }
        }
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

/// A background checkpoint under way (``RecordDatabase/startCheckpoint(_:)``).
struct PendingCheckpoint: Sendable {
    /// Tells it from a later one.
    let id: UInt64
    /// The commit the index file is written up to.
    let seq: UInt64
    /// The journal it started in, and the end of that commit's line there: the lines from there
    /// on are carried into the new journal.
    let generation: UInt64
    let journalOffset: Int
}

extension DatabaseState {
    /// Keeps `entry` (applied to the index just now) for the background checkpoint under way
    /// (``carriedEntries``), its records' bytes counted, up to ``RecordDatabase/carriedLimit``.
    mutating func carry(_ entry: JournalEntry) {
        guard carriedEntries != nil else { return }
        carriedBytes += entry.encodedSaves?.reduce(0) { $0 + $1.count } ?? 0
        guard carriedBytes <= RecordDatabase.carriedLimit else {
            carriedEntries = nil
            return
        }
        var kept = entry
        kept.encodedSaves = nil  // the records are kept decoded; their JSON is not needed again
        carriedEntries?.append(kept)
    }

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

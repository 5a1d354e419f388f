import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Checkpoints: the index snapshot (`index.jsonl`) is rewritten and the journal started afresh.
///
/// A commit that finds the journal over half the snapshot's size (and at least
/// ``checkpointMinimum``) starts one in the background (``startCheckpoint(_:)``), so that no save
/// waits for the snapshot: at 1,000,000 notes it is 340 MB, seconds of work. The snapshot holds
/// the index as it was at that commit (seq `S`):
///
/// 1. At the commit, with both locks held: the lagging files of records the index holds whole are
///    rewritten, the partial records with lagging files are listed, the snapshot's header is
///    written to a temp file, the record names are listed, and the index starts keeping the
///    metadata each record had at `S` when it first changes (``RecordEntries/keepEarlierValues()``).
/// 2. On a thread of its own, without the commit lock: each listed partial record's new file is
///    written to a temp file (its large fields read from its old file); `syncfs` makes them and
///    every record file written up to `S` durable; then the metadata of `S` is written a slice at a
///    time, each slice read under the state lock (about a millisecond); the temp file is fsynced.
///    Commits go on meanwhile.
/// 3. With both locks held again: the partial records' temp files are renamed over their files,
///    those of records a commit changed since `S` dropped (the new journal holds those commits);
///    `syncfs` (these renames, the assets of the commits since `S`); the snapshot is renamed into
///    place, and the journal is replaced by a new generation whose base is `S` and which carries
///    the lines of the commits made since (``JournalFile/replace(_:carryingFrom:temp:generation:baseSeq:)``).
///
/// A crash at any point leaves a snapshot and a journal that together hold every commit: before
/// the rename, the old pair; between the renames, the new snapshot and the old journal (whose
/// lines up to `S` are skipped at open); after, the new pair. When another process checkpoints
/// first, or this one reloads its index, the background checkpoint is dropped (its temp file
/// removed) and the next commit over the threshold starts another.
extension RecordDatabase {
    static let checkpointMinimum = 4 << 20
    /// Records whose metadata the background checkpoint writes per hold of the state lock.
    static let checkpointSlice = 1_000

    /// Forces a checkpoint now, in the caller's thread (tests and `fsck` use it).
    public func checkpoint() throws(RecordStoreError) {
        guard !isReadOnly else { throw .readOnly(path: path) }
        let changes = try state.withLock { (state) throws(RecordStoreError) -> [RecordStoreChange] in
            try Sys.lock(state.lockFD, path: layout.lockFile)
            defer { Sys.unlock(state.lockFD) }
            let changes = try catchUp(&state)
            try checkpoint(&state)
            return changes
        }
        notify(changes)
    }

    /// Waits for the background checkpoints this process started, if any is running.
    public func waitForCheckpoint() {
        for worker in checkpointWorkers.withLock({ $0 }) { worker.join() }
    }

    /// Makes everything durable, writes the index snapshot and starts a new journal generation,
    /// all before it returns (a background checkpoint in progress is dropped). Called with the
    /// commit lock held.
    func checkpoint(_ state: inout DatabaseState) throws(RecordStoreError) {
        state.endCheckpoint()
        try writeUnwrittenRecordFiles(&state)
        refreshWholeRecordFiles(&state)
        try refreshPartialRecordFiles(&state)
        try Sys.syncfs(state.lockFD, path: layout.root)
        let generation = state.journal.generation &+ 1  // from disk; a wrap only renames the generation
        let bytes = try Snapshot.write(state.index, generation: generation, to: layout.snapshot, temp: RecordFiles.tempPath(layout))
        try JournalFile.create(path: layout.journal, temp: RecordFiles.tempPath(layout), generation: generation, baseSeq: state.index.seq)
        switchJournal(&state, to: try JournalFile(path: layout.journal), snapshotBytes: bytes)
    }

    /// What both kinds of checkpoint do once the new snapshot and journal are in place.
    private func switchJournal(_ state: inout DatabaseState, to next: JournalFile, snapshotBytes: Int) {
        state.journal.close()
        state.journal = next
        state.snapshotBytes = snapshotBytes
        state.dirty = false
        state.unsyncedAssets = []
        // Everything is durable (syncfs): what this process left unused and what crashes left can go.
        collectAssets(&state)
        _ = sweepOrphans(&state, olderThan: Self.assetGracePeriod)
    }

    /// Starts a background checkpoint of the index as it is now (step 1 in this type's
    /// description). Called by a commit with the commit lock held and the index caught up.
    func startCheckpoint(_ state: inout DatabaseState) throws(RecordStoreError) {
        try writeUnwrittenRecordFiles(&state)
        refreshWholeRecordFiles(&state)
        let partials = state.index.staleRecordFiles.compactMap { name in
            state.index.entries[name].flatMap { $0.isPartial ? LaggingFile(name: name, seq: $0.seq) : nil }
        }
        let temp = RecordFiles.tempPath(layout)
        let fd = try Sys.open(temp, O_WRONLY | O_CREAT | O_TRUNC)
        var written = 0
        do throws(RecordStoreError) {
            var w = JSONWriter(capacity: Snapshot.writeBlock + (1 << 16))
            func flush(_ w: inout JSONWriter) throws(RecordStoreError) {
                try Sys.writeAll(fd, w.bytes, path: temp)
                written += w.bytes.count
                w.bytes.removeAll(keepingCapacity: true)
            }
            try Snapshot.writeHeader(state.index, generation: state.journal.generation &+ 1, into: &w, flush: flush)
            try flush(&w)
        } catch {
            Sys.close(fd)
            try? Sys.unlink(temp)
            throw error
        }
        let started = CheckpointInProgress(
            temp: temp, seq: state.index.seq, generation: state.journal.generation, journalOffset: state.journal.size)
        let names = state.index.entries.names
        let headerBytes = written
        state.index.entries.keepEarlierValues()
        state.checkpoint = started
        // The thread holds the database until it is done: `close()` joins it, `deinit` comes after.
        let worker = BackgroundWorker.start(name: "notesfs.checkpoint") { [self] _ in
            finishCheckpoint(started, fd: fd, headerBytes: headerBytes, names: names, partials: partials)
        }
        checkpointWorkers.withLock { workers in
            workers.removeAll { $0.join(until: .now) }
            workers.append(worker)
        }
    }

    /// Steps 2 and 3 of this type's description, on the checkpoint's thread; closes `fd`.
    private func finishCheckpoint(
        _ started: CheckpointInProgress, fd: Int32, headerBytes: Int, names: [String], partials: [LaggingFile]
    ) {
        var total = headerBytes
        let written: Bool
        // The partial records' new files, each in a temp file until step 3 renames it (or drops it).
        var rewritten: [(file: LaggingFile, temp: String)] = []
        defer { for item in rewritten { try? Sys.unlink(item.temp) } }  // those not renamed
        do throws(RecordStoreError) {
            defer { Sys.close(fd) }
            rewritten = try writePartialRecordFiles(partials)
            written = try writeSnapshotLines(started, fd: fd, names: names, total: &total)
            if written { try Sys.fsync(fd, path: started.temp) }
        } catch {
            dropCheckpoint(started, failure: error)
            return
        }
        guard written else {
            dropCheckpoint(started)
            return
        }
        do {
            let (done, changes) = try state.withLock { (state) throws(RecordStoreError) -> (Bool, [RecordStoreChange]) in
                try Sys.lock(state.lockFD, path: layout.lockFile)
                defer { Sys.unlock(state.lockFD) }
                let changes = try catchUp(&state)
                // Still this checkpoint's journal: no other process replaced it, this one did not reload.
                guard state.checkpoint?.temp == started.temp, state.journal.generation == started.generation,
                    try !state.journal.isReplaced()
                else { return (false, changes) }
                // The journal lines of files a full disk kept from being written are not dropped or moved.
                try writeUnwrittenRecordFiles(&state)
                // A partial record a commit changed since `S` keeps its file: the new journal holds that commit.
                while let item = rewritten.last {
                    if state.index.entries[item.file.name]?.seq == item.file.seq {
                        try Sys.rename(item.temp, layout.recordPath(item.file.name))
                        state.index.staleRecordFiles.remove(item.file.name)
                    } else {
                        try? Sys.unlink(item.temp)
                    }
                    rewritten.removeLast()
                }
                // Those renames, and the assets of the commits carried over, must be durable first.
                try Sys.syncfs(state.lockFD, path: layout.root)
                try Sys.rename(started.temp, layout.snapshot)
                try Sys.fsyncPath(layout.root, directory: true)
                let next = try JournalFile.replace(
                    state.journal, carryingFrom: started.journalOffset, temp: RecordFiles.tempPath(layout),
                    generation: started.generation &+ 1, baseSeq: started.seq)
                state.endCheckpoint()
                switchJournal(&state, to: next, snapshotBytes: total)
                return (true, changes)
            }
            notify(changes)
            if done { return }
        } catch {
            dropCheckpoint(started, failure: error)
            return
        }
        dropCheckpoint(started)
    }

    /// Writes the new file of each partial record whose file lags (step 2) to a temp file: its
    /// small fields from the index, its large ones from its old file. A record changed since the
    /// list was made, or whose old file cannot be read, is left out (its file still lags; reads
    /// merge it with the index, and the next checkpoint tries again).
    private func writePartialRecordFiles(_ files: [LaggingFile]) throws(RecordStoreError) -> [(file: LaggingFile, temp: String)] {
        var rewritten: [(file: LaggingFile, temp: String)] = []
        do throws(RecordStoreError) {
            for file in files {
                guard let metadata = state.withLock({ $0.index.entries[file.name] }), metadata.seq == file.seq,
                    let temp = try writeWholeRecordToTemp(metadata)
                else { continue }
                rewritten.append((file, temp))
            }
        } catch {
            for item in rewritten { try? Sys.unlink(item.temp) }
            throw error
        }
        return rewritten
    }

    /// Writes the metadata of every record as it was at the checkpoint's start, a slice at a time
    /// under the state lock, into `fd`. False when the checkpoint was dropped meanwhile.
    private func writeSnapshotLines(
        _ started: CheckpointInProgress, fd: Int32, names: [String], total: inout Int
    ) throws(RecordStoreError) -> Bool {
        // Record files written up to the checkpoint's commit, made durable without holding a lock.
        try Sys.syncfs(fd, path: layout.root)
        var w = JSONWriter(capacity: Snapshot.writeBlock + (1 << 16))
        var next = 0
        while next < names.count {
            let end = min(next + Self.checkpointSlice, names.count)
            let current = state.withLock { state in
                guard state.checkpoint?.temp == started.temp else { return false }
                for name in names[next..<end] {
                    guard let metadata = state.index.entries.valueWhenKept(name) else { continue }
                    metadata.write(into: &w)
                    w.raw("\n")
                }
                return true
            }
            guard current else { return false }
            if next == 0, let pause = checkpointPause.withLock({ $0 }) { pause() }
            next = end
            if w.bytes.count >= Snapshot.writeBlock || next == names.count {
                try Sys.writeAll(fd, w.bytes, path: started.temp)
                total += w.bytes.count
                w.bytes.removeAll(keepingCapacity: true)
            }
        }
        return true
    }

    /// Forgets a background checkpoint that did not complete (its temp file is removed); the
    /// journal and snapshot it would have replaced are untouched.
    private func dropCheckpoint(_ started: CheckpointInProgress, failure: RecordStoreError? = nil) {
        try? Sys.unlink(started.temp)
        state.withLock { state in
            guard state.checkpoint?.temp == started.temp else { return }
            state.endCheckpoint()
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

/// A record whose file lags behind its save of commit `seq` (see ``RecordIndex/staleRecordFiles``).
struct LaggingFile: Sendable {
    let name: String
    let seq: UInt64
}

/// What a background checkpoint captured when it started (see ``RecordDatabase/startCheckpoint(_:)``).
struct CheckpointInProgress: Sendable {
    /// The snapshot's temp file, which also names this checkpoint.
    let temp: String
    /// The commit whose index the snapshot holds: the new journal's base.
    let seq: UInt64
    /// The journal generation it replaces.
    let generation: UInt64
    /// Where the journal's lines after `seq` start.
    let journalOffset: Int
}

extension DatabaseState {
    /// Whether a commit should start a checkpoint: none runs, the journal is over half the
    /// snapshot (and ``RecordDatabase/checkpointMinimum``), and no failure asks to wait.
    var wantsCheckpoint: Bool {
        guard checkpoint == nil, journal.size > max(RecordDatabase.checkpointMinimum, snapshotBytes / 2) else { return false }
        guard let retry = checkpointRetry, retry.generation == journal.generation else { return true }
        return journal.size >= retry.size
    }

    /// Drops the background checkpoint in progress, if any: the index stops keeping earlier metadata.
    mutating func endCheckpoint() {
        guard checkpoint != nil else { return }
        checkpoint = nil
        index.entries.forgetEarlierValues()
    }
}

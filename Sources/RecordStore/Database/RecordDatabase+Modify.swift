import Foundation
import POSIX

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// How a save treats a record that changed on the server since it was fetched, as `CKModifyRecordsOperation.RecordSavePolicy`.
public enum SavePolicy: Sendable {
    /// Fail with ``RecordStoreError/serverRecordChanged(serverRecord:clientRecord:)`` when the change tag is stale.
    case ifServerRecordUnchanged
    /// Write only the keys the client changed onto the server record, whatever its change tag.
    case changedKeys
    /// Replace every field with the client's, whatever the change tag.
    case allKeys
}

/// What a delete requires of the stored record when the modify commits (checked under the commit
/// lock, after catching up with every other process's commits): a caller that resolved a name to
/// a record some time ago deletes that record only if it is still what the caller saw.
public struct DeleteCondition: Sendable, Hashable {
    /// The change tag the caller saw (nil: any). Another tag means the record changed since (a move
    /// or an edit made elsewhere).
    public var recordChangeTag: String?
    /// The delete may not cascade: no record may hold a `.deleteSelf` reference to it (a folder the
    /// caller saw empty, which another process may have filled since).
    public var refusesCascade: Bool

    public init(recordChangeTag: String? = nil, refusesCascade: Bool = false) {
        self.recordChangeTag = recordChangeTag
        self.refusesCascade = refusesCascade
    }
}

/// What a modify did.
public struct ModifyResult: Sendable {
    /// The saved records as stored: new change tags, dates and identities.
    public var savedRecords: [Record]
    /// Every deleted record, cascaded deletes included.
    public var deletedRecordIDs: [RecordID]
}

extension RecordDatabase {
    /// Saves `records` and deletes `recordIDs` in one atomic step: all of it or nothing.
    ///
    /// Deletes cascade to records holding a `.deleteSelf` reference to a deleted record,
    /// recursively. The change is in the journal when this returns (it survives `kill -9`); call
    /// ``sync()`` to make it survive power loss.
    ///
    /// - Throws: ``RecordStoreError/serverRecordChanged(serverRecord:clientRecord:)`` for a stale
    ///   change tag, ``RecordStoreError/unknownItem(_:)`` for a delete of a missing record or a
    ///   save of a record deleted on the server, ``RecordStoreError/invalidReference(from:key:to:)``
    ///   for a reference to a missing or deleted record, ``RecordStoreError/invalidArguments(_:)``,
    ///   ``RecordStoreError/io(path:operation:errno:)``.
    ///
    /// - Parameters:
    ///   - asExternalChange: observers see this commit as another process's
    ///     (``RecordStoreChange/isExternal``): for a writer that shares this instance with the
    ///     observer's owner but is not it, as a sync engine applying another machine's changes in
    ///     a mount's process (the mount must tell the kernel about them as about any outside change).
    ///   - reason: why the caller makes this change, handed to the commit hook (``CommitHook``)
    ///     as it is; the store itself ignores it.
    ///   - deleteConditions: what some of the deletes require of their stored records at commit
    ///     time (``DeleteCondition``); one that does not hold fails the whole modify with
    ///     ``RecordStoreError/serverRecordChanged(serverRecord:clientRecord:)`` (the client record
    ///     is the stored one's ID and type with the tag the caller gave).
    ///   - unchangedSince: the state the change was planned on: when any commit (another
    ///     process's too) came after this token, nothing is committed and the modify throws
    ///     ``RecordStoreError/changedSince(_:)`` (a rename whose link rewrites were found at that
    ///     token must not miss a note committed meanwhile).
    @discardableResult
    public func modify(
        saving records: [Record] = [], deleting recordIDs: [RecordID] = [],
        savePolicy: SavePolicy = .ifServerRecordUnchanged, asExternalChange: Bool = false, reason: ModifyReason? = nil,
        deleteConditions: [RecordID: DeleteCondition] = [:], unchangedSince: ChangeToken? = nil
    ) throws(RecordStoreError) -> ModifyResult {
        var seen = Set<RecordID>()
        for id in records.map(\.recordID) + recordIDs where !seen.insert(id).inserted {
            throw .invalidArguments("record \(id) appears twice")
        }
        // Nothing is committed that the store could not read back (``Record/validityProblem``).
        for record in records {
            if let problem = record.validityProblem { throw .invalidArguments("record \(record.recordID): \(problem)") }
        }
        for id in deleteConditions.keys where !recordIDs.contains(id) {
            throw .invalidArguments("a delete condition names \(id), which this modify does not delete")
        }
        let entry: JournalEntry
        do {
            // What the hook adds may use the space reserve only while it leaves most of it to the
            // delete alone, tried next.
            entry = try commit(asExternalChange: asExternalChange, reserveLimit: Self.spaceReserve / 4) {
                (index, seq) throws(RecordStoreError) in
                if let token = unchangedSince, token != ChangeToken(databaseID: databaseID, seq: seq - 1) {
                    throw .changedSince(token)
                }
                try checkDeleteConditions(deleteConditions, index: index)
                return try prepare(
                    records, deleting: recordIDs, policy: savePolicy, seq: seq, index: index, reason: reason, shortOfSpace: false)
            }
        } catch {
            // A full disk: a delete must still work (it frees space), so it goes with only what the
            // commit hook says it cannot go without (``PendingCommit/isShortOfSpace``): not the
            // versions of what it deletes, which may be what did not fit.
            guard error.isOutOfSpace, !recordIDs.isEmpty, commitHook.withLock({ $0 != nil }) else { throw error }
            log("no room for the records the commit hook adds to a delete: deleting with only those it needs (\(error))")
            entry = try commit(asExternalChange: asExternalChange) { (index, seq) throws(RecordStoreError) in
                if let token = unchangedSince, token != ChangeToken(databaseID: databaseID, seq: seq - 1) {
                    throw .changedSince(token)
                }
                try checkDeleteConditions(deleteConditions, index: index)
                return try prepare(
                    records, deleting: recordIDs, policy: savePolicy, seq: seq, index: index, reason: reason, shortOfSpace: true)
            }
        }
        return ModifyResult(savedRecords: entry.saves.map { $0.clearingChanges() }, deletedRecordIDs: entry.deletes)
    }

    /// Commits one journal entry built by `build` from the caught-up index, with the commit lock held:
    /// append to the journal, write the record files, apply to the index, notify observers.
    ///
    /// The space reserve (``ensureSpaceReserve(_:)``) is for deletes: a commit that deletes may
    /// release it when the disk is full (if its journal line is at most `reserveLimit` bytes); one
    /// that does not is refused with `ENOSPC` while the reserve is missing and cannot be made again,
    /// so that space a delete freed goes to the reserve before any save.
    func commit(
        asExternalChange: Bool = false, reserveLimit: Int = .max,
        _ build: (RecordIndex, UInt64) throws(RecordStoreError) -> JournalEntry
    ) throws(RecordStoreError) -> JournalEntry {
        guard !isReadOnly else { throw .readOnly(path: path) }
        // Other processes' commits the catch-up applied to the index: observers hear of them even
        // when this commit then fails (a change tag they made stale), or never would.
        var caughtUp: [RecordStoreChange] = []
        let entry: JournalEntry
        let changes: [RecordStoreChange]
        do {
            (entry, changes) = try state.withLock { (state) throws(RecordStoreError) -> (JournalEntry, [RecordStoreChange]) in
                try lockCommits(&state)
                defer { unlockCommits(state) }
                var changes = try catchUp(&state)
                caughtUp = changes
                if let entry = state.unverifiedForeignEntry {
                    // A full disk does not stop a commit (a delete frees space): its files are redone later.
                    let error = try Self.redo(
                        entry, layout: layout, verify: true, journalInode: state.journal.inode, unwritten: &state.unwrittenRecordFiles
                    ).error
                    if error == nil { state.unverifiedForeignEntry = nil }
                }
                retryUnwrittenRecordFiles(&state)
                try state.journal.truncateTail()

                // A damaged journal line may claim seq UInt64.max: refuse rather than wrap.
                guard state.index.seq < UInt64.max else {
                    throw .damagedRecord(nil, path: layout.journal, reason: "commit sequence numbers are exhausted")
                }
                let seq = state.index.seq + 1
                var entry = try build(state.index, seq)
                if entry.deletes.isEmpty, !spaceReserveHeld(&state) {
                    throw .io(path: layout.spaceReserve, operation: "make the space reserve (room kept for deletes)", errno: ENOSPC)
                }
                entry.encodeSaves()
                try entry.checkSizes()
                try ensureAssetsStored(entry.saves, state: &state)
                let assetsBefore = (entry.deletes.map(\.recordName) + entry.saves.map(\.recordID.recordName))
                    .flatMap { state.index.entries[$0]?.assets ?? [] }
                entry.lineOffset = state.journal.size
                let line = entry.encodedLine()
                do throws(RecordStoreError) {
                    try state.journal.append(line)
                } catch {
                    // A full disk: a delete may use the space reserve (it frees more than it takes).
                    guard error.isOutOfSpace, !entry.deletes.isEmpty, line.count <= reserveLimit, releaseSpaceReserve() else {
                        throw error
                    }
                    state.spaceReserveSeenAt = nil
                    try state.journal.append(line)
                }
                state.dirty = true
                state.hasCommitted = true
                var writtenFiles: [String] = []
                do throws(RecordStoreError) {
                    // Committed in the journal: on a full disk the files are read from it until
                    // they are written (by a later commit, the background thread or the next open).
                    let redone = try Self.redo(
                        entry, layout: layout, verify: false, journalInode: state.journal.inode, unwritten: &state.unwrittenRecordFiles)
                    writtenFiles = redone.written
                    if redone.error == nil, let start = entry.lineOffset {
                        VerifiedMark.advance(state.lockFD, generation: state.journal.generation, from: start, to: state.journal.size)
                    }
                    if let error = redone.error {
                        state.unverifiedForeignEntry = entry
                        log("record files of commit \(seq) not written yet (\(error)): the journal holds the commit")
                    }
                } catch {
                    // Committed in the journal; the files are redone by the next commit or open.
                    state.unverifiedForeignEntry = entry
                    log("writing record files of commit \(seq): \(error)")
                }
                let deleted = state.index.apply(entry)
                state.carry(entry)
                for name in writtenFiles { state.index.staleRecordFiles.remove(name) }
                noteAssetChanges(entry, before: assetsBefore, state: &state)
                let saved = entry.saves.compactMap { state.index.entries[$0.recordID.recordName] }
                changes.append(
                    RecordStoreChange(
                        saved: saved, deleted: deleted, isExternal: asExternalChange, isReset: false,
                        token: ChangeToken(databaseID: databaseID, seq: seq)))
                if state.wantsCheckpoint {
                    do throws(RecordStoreError) { try checkpointAfterCommit(&state) } catch { checkpointFailed(error, state: &state) }
                }
                return (entry, changes)
            }
        } catch {
            notify(caughtUp)
            throw error
        }
        notify(changes)
        return entry
    }

    static let identityBlock: UInt64 = 256

    /// An identity for a record not saved yet (see ``Record/useReservedIdentity(_:)``).
    ///
    /// Identities are reserved in blocks by a small commit, so they are unique across processes
    /// and never handed out twice, even after a crash (an unused one is simply skipped).
    public func reserveIdentity() throws(RecordStoreError) -> UInt64 {
        if let identity = state.withLock({ state -> UInt64? in
            guard !state.reservedIdentities.isEmpty else { return nil }
            return state.reservedIdentities.popFirst()
        }) {
            return identity
        }
        let entry = try commit { (index, seq) throws(RecordStoreError) in
            // A damaged record may claim an identity near UInt64.max: refuse rather than wrap.
            let (end, overflow) = index.nextIdentity.addingReportingOverflow(Self.identityBlock)
            guard !overflow else { throw .damagedRecord(nil, path: path, reason: "record identities are exhausted") }
            return JournalEntry(seq: seq, saves: [], deletes: [], reservedUpTo: end)
        }
        guard let end = entry.reservedUpTo else { throw .invalidArguments("identity reservation was not committed") }
        return state.withLock { state in
            state.reservedIdentities = (end - Self.identityBlock + 1)..<end
            return end - Self.identityBlock
        }
    }

    /// Throws ``RecordStoreError/serverRecordChanged(serverRecord:clientRecord:)`` for the first
    /// of `conditions` that the caught-up `index` does not meet.
    private func checkDeleteConditions(_ conditions: [RecordID: DeleteCondition], index: RecordIndex) throws(RecordStoreError) {
        for (id, condition) in conditions.sorted(by: { $0.key.recordName < $1.key.recordName }) {
            guard let server = index.entries[id.recordName] else { throw .unknownItem(id) }
            let tagChanged = condition.recordChangeTag.map { $0 != server.recordChangeTag } ?? false
            let cascades = condition.refusesCascade && !index.cascade(from: [id.recordName], sparing: []).isEmpty
            guard tagChanged || cascades else { continue }
            var client = Record(recordType: server.recordType, recordID: id)
            client.recordChangeTag = condition.recordChangeTag
            let serverRecord = (try? fullRecord(server)) ?? server.record
            throw .serverRecordChanged(serverRecord: serverRecord.clearingChanges(), clientRecord: client)
        }
    }

    /// Builds the journal entry for a modify, checking change tags and references against `index`.
    private func prepare(
        _ records: [Record], deleting recordIDs: [RecordID], policy: SavePolicy, seq: UInt64, index: RecordIndex,
        reason: ModifyReason?, shortOfSpace: Bool
    ) throws(RecordStoreError) -> JournalEntry {
        for id in recordIDs where index.entries[id.recordName] == nil { throw .unknownItem(id) }
        var savedNames = Set(records.map(\.recordID.recordName))
        let roots = recordIDs.map(\.recordName)
        let deletes = roots + index.cascade(from: roots, sparing: savedNames)
        let deletedNames = Set(deletes)

        let now = Date()
        let tag = String(seq, radix: 36)
        var nextIdentity = index.nextIdentity
        var saves: [Record] = []
        func store(_ client: Record) throws(RecordStoreError) {
            var stored: Record
            if let server = index.entries[client.recordID.recordName] {
                guard server.recordType == client.recordType else {
                    throw .invalidArguments("record \(client.recordID) is a \(server.recordType), not a \(client.recordType)")
                }
                switch policy {
                case .ifServerRecordUnchanged:
                    guard client.recordChangeTag == server.recordChangeTag else {
                        let serverRecord = (try? fullRecord(server)) ?? server.record
                        throw .serverRecordChanged(serverRecord: serverRecord.clearingChanges(), clientRecord: client)
                    }
                    stored = client
                case .changedKeys:
                    stored = server.record
                    for key in client.changedKeys { stored[key] = client.fields[key] }
                    if client.modificationDateWasSet { stored.modificationDate = client.modificationDate }
                case .allKeys:
                    stored = client
                }
                if stored.isPartial {
                    try complete(&stored, server: server)
                }
                stored.identity = server.storedIdentity
                if let taken = client.takenIdentity, taken != server.storedIdentity {
                    // Only the identity of a record this very modify deletes (deletes apply first).
                    guard deletes.contains(where: { index.entries[$0]?.storedIdentity == taken }),
                        !saves.contains(where: { $0.identity == taken })
                    else { throw .invalidArguments("record \(client.recordID): identity \(taken) is not one of a record deleted here") }
                    stored.identity = taken
                }
                stored.creationDate = server.creationDate
                if !client.modificationDateWasSet { stored.storedModificationDate = now }
            } else {
                if policy == .ifServerRecordUnchanged, client.recordChangeTag != nil { throw .unknownItem(client.recordID) }
                guard !client.isPartial else {
                    throw .invalidArguments("record \(client.recordID): a partial record (from the index) cannot create a record")
                }
                stored = client
                if client.takenIdentity != nil {
                    throw .invalidArguments("record \(client.recordID): only a saved record can take another's identity")
                }
                if let reserved = client.identity {
                    // From reserveIdentity(): below nextIdentity and not in use.
                    guard reserved >= RecordIndex.firstIdentity, reserved < index.nextIdentity, index.names[reserved] == nil,
                        !saves.contains(where: { $0.identity == reserved })
                    else { throw .invalidArguments("record \(client.recordID): identity \(reserved) was not reserved or is in use") }
                } else {
                    guard nextIdentity < UInt64.max else {
                        throw .damagedRecord(nil, path: path, reason: "record identities are exhausted")
                    }
                    stored.identity = nextIdentity
                    nextIdentity += 1
                }
                if !client.creationDateWasSet || client.creationDate == nil { stored.creationDate = now }
                if !client.modificationDateWasSet || client.modificationDate == nil { stored.storedModificationDate = now }
            }
            stored.recordChangeTag = tag
            stored = stored.clearingChanges()
            stored.makeDatesStorable()
            for (key, reference) in stored.references {
                let target = reference.recordID.recordName
                guard (index.entries[target] != nil || savedNames.contains(target)) && !deletedNames.contains(target) else {
                    throw .invalidReference(from: stored.recordID, key: key, to: reference.recordID)
                }
            }
            saves.append(stored)
        }
        for client in records { try store(client) }
        if let hook = commitHook.withLock({ $0 }) {
            let pending = PendingCommit(
                reason: reason,
                saves: zip(records, saves).map { client, stored in
                    PendingCommit.Save(
                        record: stored, previous: index.entries[stored.recordID.recordName], takesIdentity: client.takenIdentity != nil)
                },
                deleted: deletes.compactMap { index.entries[$0] },
                takenIdentities: Set(records.compactMap(\.takenIdentity)), date: now, isShortOfSpace: shortOfSpace, database: self,
                index: index)
            var additions: [Record] = []
            for record in try hook.records(toAddTo: pending) {
                // The hook's form of a record the caller saves here: its fields replace the caller's,
                // with the save's system fields (change tag, identity, dates), already checked.
                guard let i = saves.firstIndex(where: { $0.recordID == record.recordID }) else {
                    additions.append(record)
                    continue
                }
                guard record.recordType == saves[i].recordType, !record.isPartial, record.references.isEmpty else {
                    throw .invalidArguments(
                        "record \(record.recordID) replaced by the commit hook: another type, partial or with references")
                }
                if let problem = record.validityProblem { throw .invalidArguments("record \(record.recordID): \(problem)") }
                saves[i].fields = record.fields
                saves[i].omitted = OmittedFields()
            }
            for record in additions {
                let name = record.recordID.recordName
                // New, or the next version of a stored record this commit neither saves nor deletes.
                guard !savedNames.contains(name), !deletedNames.contains(name),
                    record.recordChangeTag == index.entries[name]?.recordChangeTag
                else {
                    throw .invalidArguments(
                        "record \(record.recordID) added by the commit hook is neither new nor the stored version's next")
                }
                if let problem = record.validityProblem { throw .invalidArguments("record \(record.recordID): \(problem)") }
                savedNames.insert(name)
            }
            for record in additions { try store(record) }
        }
        return JournalEntry(seq: seq, saves: saves, deletes: deletes.map(RecordID.init(recordName:)))
    }

    /// Prepares a partial record's save (one from the index, see ``Record/omittedSizes``) against
    /// the stored version `server`: it stays a metadata-only save when every field it carries is
    /// small and every field it leaves out is still a large field of the stored record (the journal
    /// line then carries their sizes, and no record file is written); otherwise the left-out
    /// fields are read from the stored record and it becomes a full save.
    private func complete(_ stored: inout Record, server: RecordMetadata) throws(RecordStoreError) {
        let keepsLargeFields = stored.omitted.keys.allSatisfy(server.isLarge)
        if keepsLargeFields, stored.fields.values.allSatisfy(RecordMetadata.isSmall) {
            // The sizes as stored now (the client's copy may be older).
            var sizes = OmittedFields()
            for key in stored.omitted.keys { sizes[key] = server.omitted[key] }
            stored.omitted = sizes
            return
        }
        let current = try fullRecord(server)
        for key in stored.omitted.keys { stored.fields[key] = current.fields[key] }
        stored.omitted = OmittedFields()
    }

    /// The whole stored record of `metadata`, its file read as it is: from inside a commit (the
    /// state lock is held, so not through ``readRecordFile(_:)``; the commit lock too), or by a
    /// background checkpoint with no lock held, which keeps what it makes of it only if no commit
    /// changed the record meanwhile (so what it read from a file such a commit was rewriting is dropped).
    func fullRecord(_ metadata: RecordMetadata) throws(RecordStoreError) -> Record {
        try Self.merge(metadata, path: layout.recordPath(metadata.recordID.recordName)) { () throws(RecordStoreError) in
            try RecordFiles.read(metadata.recordID, layout: layout)
        }
    }

    /// Rewrites up to `limit` of the lagging record files (``RecordIndex/staleRecordFiles``) of
    /// records the index holds whole (no large field), in place: their file adds nothing to the
    /// index, so a file torn by a crash mid-write costs nothing (recovery redoes it from the
    /// journal, `fsck --repair` writes it again from the index). Files of partial records are left
    /// to ``refreshPartialRecordFiles(_:)``. Called with the commit lock held and the index caught up.
    func refreshWholeRecordFiles(_ state: inout DatabaseState, limit: Int = .max) {
        for name in Self.wholeStaleRecordFiles(state.index, limit: limit) {
            state.index.staleRecordFiles.remove(name)
            guard let metadata = state.index.entries[name] else { continue }
            do throws(RecordStoreError) {
                try Sys.overwriteFile(layout.recordPath(name), RecordCoding.encode(metadata.record))
            } catch {
                // Still lagging: tried again later, and the checkpoint writes it before it drops the journal.
                state.index.staleRecordFiles.insert(name)
                log("rewriting the record file of \(name): \(error)")
                if error.isOutOfSpace { return }
            }
        }
    }

    /// Up to `limit` lagging record files of records the index holds whole.
    private static func wholeStaleRecordFiles(_ index: RecordIndex, limit: Int) -> [String] {
        var names: [String] = []
        for name in index.staleRecordFiles where index.entries[name]?.isPartial != true {
            if names.count == limit { break }
            names.append(name)
        }
        return names
    }

    /// Rewrites every lagging file of a partial record (its large fields are in that file alone,
    /// once the journal lines since its last full save are gone): each new version is written to a
    /// temp file, all of them are made durable (`syncfs`), and only then renamed over the record
    /// files, so that a crash at any point leaves every file whole, old or new. Called by the
    /// checkpoint, with the commit lock held and the index caught up; the checkpoint's own
    /// `syncfs` then makes the renames durable before it drops the journal.
    /// - Throws: the errors of writing, `syncfs` and `rename` (the checkpoint then fails and keeps
    ///   its journal: nothing is lost).
    func refreshPartialRecordFiles(_ state: inout DatabaseState) throws(RecordStoreError) {
        var written: [(name: String, temp: String)] = []
        defer { for item in written { try? Sys.unlink(item.temp) } }  // what was not renamed
        for name in state.index.staleRecordFiles {
            guard let metadata = state.index.entries[name], metadata.isPartial,
                let temp = try writeWholeRecordToTemp(metadata)
            else { continue }
            written.append((name, temp))
        }
        guard !written.isEmpty else { return }
        try Sys.syncfs(state.lockFD, path: layout.root)
        while let item = written.last {
            try Sys.rename(item.temp, layout.recordPath(item.name))
            written.removeLast()
            state.index.staleRecordFiles.remove(item.name)
        }
    }

    /// Writes the whole record of `metadata` (its large fields read from its file, see
    /// ``fullRecord(_:)``) to a new temp file and returns its path; nil, logged, when that file
    /// cannot be read (it is left as it is: reads still merge it with the index). A failed write
    /// removes the temp file and throws.
    func writeWholeRecordToTemp(_ metadata: RecordMetadata) throws(RecordStoreError) -> String? {
        let record: Record
        do { record = try fullRecord(metadata) } catch {
            log("rewriting the record file of \(metadata.recordID.recordName): \(error)")
            return nil
        }
        let temp = RecordFiles.tempPath(layout)
        let fd = try Sys.open(temp, O_WRONLY | O_CREAT | O_TRUNC)
        defer { Sys.close(fd) }
        do { try Sys.writeAll(fd, RecordCoding.encode(record), path: temp) } catch {
            try? Sys.unlink(temp)
            throw error
        }
        return temp
    }

    /// Rewrites up to `limit` lagging record files of records the index holds whole, now, under
    /// the commit lock, after catching up with other processes' commits (the background thread's
    /// share of the checkpoint's work; see ``refreshWholeRecordFiles(_:limit:)``).
    func refreshWholeRecordFiles(limit: Int) throws(RecordStoreError) {
        // Nothing to do while only partial records lag (they wait for the checkpoint): the commit
        // lock is not taken then.
        guard !isReadOnly,
            state.withLock({ !Self.wholeStaleRecordFiles($0.index, limit: 1).isEmpty || !$0.unwrittenRecordFiles.isEmpty })
        else { return }
        let changes = try state.withLock { (state) throws(RecordStoreError) -> [RecordStoreChange] in
            try lockCommits(&state)
            defer { unlockCommits(state) }
            let changes = try catchUp(&state)
            retryUnwrittenRecordFiles(&state)
            refreshWholeRecordFiles(&state, limit: limit)
            return changes
        }
        notify(changes)
    }

    /// Makes every commit so far survive power loss: fsyncs new assets, then the journal; then
    /// deletes the assets this process's commits left unused (see ``RecordDatabase/makeAsset(_:)``).
    ///
    /// Never calls observers: when another process has committed since this one last read the
    /// journal, the collection waits for the next sync after a commit or refresh has caught up.
    public func sync() throws(RecordStoreError) {
        guard !isReadOnly else { return }
        try state.withLock { (state) throws(RecordStoreError) in
            for path in state.unsyncedAssets { try Sys.fsyncPath(path) }
            for dir in Set(state.unsyncedAssets.map(AtomicFile.directory(of:))) {
                try Sys.fsyncPath(dir, directory: true)
            }
            state.unsyncedAssets = []
            try state.journal.sync()
            state.dirty = false
            guard !state.collectable.isEmpty else { return }
            try lockCommits(&state)
            defer { unlockCommits(state) }
            // Caught up (nothing new in the journal) means the counts are every process's.
            guard try !state.journal.isReplaced(), try !state.journal.hasNewBytes() else { return }
            collectAssets(&state)
        }
    }

    func syncIfDirty() throws(RecordStoreError) {
        if state.withLock({ $0.dirty || !$0.unsyncedAssets.isEmpty || !$0.collectable.isEmpty }) { try sync() }
    }
}

import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

extension RecordDatabase {
    /// Fetches one full record.
    ///
    /// - Throws: ``RecordStoreError/unknownItem(_:)``, or ``RecordStoreError/damagedRecord(_:path:reason:)``
    ///   when its file is damaged (the rest of the database stays usable).
    public func record(for id: RecordID) throws(RecordStoreError) -> Record {
        // ``records(for:)`` reads other processes' commits first (a stat and an fstat when there
        // are none), so a fetch sees the latest version even where the index answers it alone.
        try records(for: [id])[id, default: .failure(.unknownItem(id))].get()
    }

    /// Reads a full record: its small and system fields from the index, its large fields from
    /// its record file (which lags behind metadata-only saves until the next checkpoint).
    ///
    /// A file newer than this process's index (another process's full save not read yet) is
    /// returned as it is, as a whole: it is one consistent version of the record.
    func readRecordFile(_ id: RecordID) throws(RecordStoreError) -> Record {
        guard let metadata = state.withLock({ $0.index.entries[id.recordName] }) else { return try readStoredRecordFile(id) }
        return try readRecordFile(id, metadata: metadata)
    }

    /// ``readRecordFile(_:)`` of a record whose metadata is `metadata`; `unwritten: false` when the
    /// caller found, after it read `metadata`, that the record's file is not one a full disk kept
    /// from being written (a later commit cannot make the file older than `metadata`).
    private func readRecordFile(_ id: RecordID, metadata: RecordMetadata, unwritten: Bool = true) throws(RecordStoreError) -> Record {
        try Self.merge(metadata, path: layout.recordPath(id.recordName)) { () throws(RecordStoreError) in
            // A file a full disk kept from being written: the journal holds the record.
            if unwritten, let record = unwrittenRecord(id) { return record }
            return try readStoredRecordFile(id)
        }
    }

    /// `metadata`'s record with the large fields it leaves out taken from the record file that
    /// `file` reads (not read at all when there are none: the index holds the whole record).
    /// - Throws: ``RecordStoreError/damagedRecord(_:path:reason:)`` when the file lacks one of them.
    static func merge(
        _ metadata: RecordMetadata, path: @autoclosure () -> String, file read: () throws(RecordStoreError) -> Record
    ) throws(RecordStoreError) -> Record {
        guard metadata.isPartial else { return metadata.record }
        let file = try read()
        if let tag = file.recordChangeTag, let fileSeq = UInt64(tag, radix: 36), fileSeq > metadata.seq { return file }
        guard metadata.recordType == file.recordType else {
            throw .damagedRecord(
                metadata.recordID, path: path(), reason: "the record file holds a \(file.recordType), not a \(metadata.recordType)")
        }
        let omittedKeys = metadata.omitted.keys
        for key in omittedKeys where file.fields[key] == nil {
            throw .damagedRecord(metadata.recordID, path: path(), reason: "the record file lacks its field \(key)")
        }
        // The file of the very version the index holds (the change tag names a commit, and a
        // commit saves a record once): the same record, nothing to merge. A file that lags behind
        // saves of small fields only has an older tag.
        if file.recordChangeTag == metadata.recordChangeTag { return file }
        var merged = metadata.record(reservingCapacity: omittedKeys.count)
        for key in omittedKeys { merged.fields[key] = file.fields[key] }
        merged.omitted = OmittedFields()
        return merged
    }

    /// `metadata`'s record with its large fields from a record file of the very version the index
    /// holds, decoding only those (``RecordCoding/decodeFields(_:of:from:)``): what ``merge(_:path:file:)``
    /// gives for that file. Nil for any other file (an older one, a damaged one): decode it whole.
    static func merged(_ metadata: RecordMetadata, fromFile bytes: UnsafeRawBufferPointer) -> Record? {
        guard metadata.isPartial else { return metadata.record }
        let keys = metadata.omitted.keys
        guard let large = RecordCoding.decodeFields(keys, of: metadata, from: bytes) else { return nil }
        var record = metadata.record(reservingCapacity: keys.count)
        for (key, value) in large { record.fields[key] = value }
        record.omitted = OmittedFields()
        return record
    }

    /// Reads a record file as stored; one that looks damaged is read again under a shared commit
    /// lock, since a commit in another process may have been overwriting it (see ``redo(_:layout:verify:)``).
    func readStoredRecordFile(_ id: RecordID) throws(RecordStoreError) -> Record {
        do {
            return try RecordFiles.read(id, layout: layout)
        } catch {
            guard case .damagedRecord = error else { throw error }
            let again = whileNoCommitWrites { () -> Result<Record, RecordStoreError> in
                do throws(RecordStoreError) { return .success(try RecordFiles.read(id, layout: layout)) } catch { return .failure(error) }
            }
            // No lock file (a read-only database that never had a writer): nobody is writing.
            guard let again else { throw error }
            return try again.get()
        }
    }

    /// Fetches several records, each with its own result, as `CKFetchRecordsOperation`.
    public func records(for ids: [RecordID]) -> [RecordID: Result<Record, RecordStoreError>] {
        // Other processes' commits first, once for the batch.
        try? refresh()
        var results: [RecordID: Result<Record, RecordStoreError>] = [:]
        // The metadata of a few records at a time, in one hold of the state lock: a build's four
        // readers took it twice a record, and spun for it (5% of a build's samples).
        for start in stride(from: 0, to: ids.count, by: Self.fetchChunk) {
            let chunk = ids[start..<min(ids.count, start + Self.fetchChunk)]
            let found = state.withLock { state in
                chunk.map { id in (state.index.entries[id.recordName], state.unwrittenRecordFiles[id.recordName] != nil) }
            }
            for (id, (metadata, unwritten)) in zip(chunk, found) {
                do throws(RecordStoreError) {
                    guard let metadata else { throw .unknownItem(id) }
                    results[id] = .success(try readRecordFile(id, metadata: metadata, unwritten: unwritten))
                } catch {
                    if case .damagedRecord = error { log(error.description) }
                    results[id] = .failure(error)
                }
            }
        }
        return results
    }

    /// Records whose metadata ``records(for:)`` looks up in one hold of the state lock.
    static let fetchChunk = 32

    /// The in-memory metadata of a record (no file read); nil when it does not exist.
    public func metadata(for id: RecordID) -> RecordMetadata? {
        state.withLock { $0.index.entries[id.recordName] }
    }

    /// The metadata of the record with this identity; nil when none has it.
    public func metadata(identity: UInt64) -> RecordMetadata? {
        state.withLock { state in state.index.name(identity: identity).flatMap { state.index.entries[$0] } }
    }

    /// Metadata of the records that reference `target` through field `key` (the reference index: no scan).
    public func referrers(to target: RecordID, key: String) -> [RecordMetadata] {
        state.withLock { $0.index.metadata(referringTo: target.recordName, key: key) }
    }

    /// Metadata of the records referencing, through field `key`, a record name for which
    /// `isTarget` holds (missing records included): a walk over the reference index's targets.
    public func referrers(key: String, toRecordsWhere isTarget: (String) -> Bool) -> [RecordMetadata] {
        state.withLock { state in
            var found: [RecordMetadata] = []
            for target in state.index.candidateTargets(key: key) where isTarget(target) {
                found += state.index.metadata(referringTo: target, key: key)
            }
            return found
        }
    }

    /// Metadata of the records of type `recordType` that hold no reference in field `key` (the
    /// records at the top of a hierarchy that `key` builds), from the index's table of the
    /// reference keys each record holds: no scan of the type's other records.
    public func metadata(ofType recordType: String, withoutReferenceIn key: String) -> [RecordMetadata] {
        state.withLock { state in
            let entries = state.index.entries
            var found =
                entries.base?.metadata(ofType: recordType, withoutReferenceIn: key).filter { !entries.isShadowed($0.recordID.recordName) }
                ?? []
            for metadata in entries.overlay where metadata.recordType == recordType {
                var referenced = false
                metadata.forEachReference { referenceKey, _ in if referenceKey == key { referenced = true } }
                if !referenced { found.append(metadata) }
            }
            return found
        }
    }

    /// Metadata of every record of type `recordType` (from the index's table of types).
    public func metadata(ofType recordType: String) -> [RecordMetadata] {
        metadata(ofType: recordType, where: { _ in true })
    }

    /// The record names of every record of type `recordType`, in no particular order (from the
    /// index's table of types): a name a record, where ``metadata(ofType:)`` decodes and copies
    /// each record's metadata.
    public func recordNames(ofType recordType: String) -> [String] {
        state.withLock { $0.index.entries.names(ofType: recordType) }
    }

    /// Metadata of the records of type `recordType` for which `isIncluded` holds: tested in the
    /// index under its lock (only those copied out), so `isIncluded` must be quick.
    public func metadata(ofType recordType: String, where isIncluded: (RecordMetadata) -> Bool) -> [RecordMetadata] {
        var found: [RecordMetadata] = []
        forEachMetadata(ofType: recordType) { if isIncluded($0) { found.append($0) } }
        return found
    }

    /// Metadata of the records for which `isIncluded` holds: one scan of the index under its
    /// lock (only those copied out), so `isIncluded` must be quick.
    public func metadata(where isIncluded: (RecordMetadata) -> Bool) -> [RecordMetadata] {
        var found: [RecordMetadata] = []
        forEachMetadata { if isIncluded($0) { found.append($0) } }
        return found
    }

    /// Calls `body` with the metadata of every record (of `recordType` only, when given), one at
    /// a time, in one scan of the index under its lock: a pass over every record of a large
    /// database (history's retention, say) keeps what `body` keeps, not every record's metadata.
    /// `body` must be quick and must not call the database.
    public func forEachMetadata(ofType recordType: String? = nil, _ body: (RecordMetadata) -> Void) {
        withoutActuallyEscaping(body) { body in
            let visit = CalledInPlace(body: body)
            state.withLock { state in state.index.entries.forEachValue(ofType: recordType, visit.body) }
        }
    }

    /// Number of records in the database.
    public var recordCount: Int { state.withLock { $0.index.entries.count } }

    /// How many rows of metadata this value has read from its index file so far (0 for one built
    /// in memory): what a listing or a lookup cost, for the tests that pin it to the work.
    public var metadataRowsRead: Int { state.withLock { $0.index.entries.base?.rowsRead } ?? 0 }
}

/// A closure carried into the state lock by ``RecordDatabase/forEachMetadata(ofType:_:)``.
///
/// `@unchecked Sendable` is safe: the closure is called on the thread that made this value, inside
/// that call (`withoutActuallyEscaping` checks it is not kept), with Sendable metadata only; the
/// region checker cannot tell a closure called under the lock from one stored with the state.
private struct CalledInPlace: @unchecked Sendable {
    let body: (RecordMetadata) -> Void
}

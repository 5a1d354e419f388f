import Foundation
import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A record a query matched, with the values it sorts on.
struct QueryMatch {
    var metadata: RecordMetadata
    /// One value for each sort descriptor, in order.
    var sortValues: [FieldValue?]
}

extension RecordDatabase {
    /// The full record a record file's bytes hold, read by a batch (``RecordFileBatch``) rather
    /// than by ``readRecordFile(_:)``: every full record a query reads comes through here or there.
    ///
    /// - Throws: ``RecordStoreError/damagedRecord(_:path:reason:)``; the caller then reads the
    ///   record through ``readRecordFile(_:)``, which re-reads a half-written file under the lock.
    /// Merged with the index as ``readRecordFile(_:)`` merges (the file lags behind saves of
    /// small fields only: see ``merge(_:path:file:)``).
    func record(_ id: RecordID, fromFile bytes: UnsafeRawBufferPointer) throws(RecordStoreError) -> Record {
        let path = layout.recordPath(id.recordName)
        let file = try RecordFiles.record(id, fromFile: bytes, path: path)
        guard let metadata = state.withLock({ $0.index.entries[id.recordName] }) else { return file }
        return try Self.merge(metadata, path: path) { file }
    }

    /// The records of `candidates` that match `query`, reading their files in parallel.
    ///
    /// A predicate's value for a key is the file's for a large field and the in-memory index's for
    /// the rest (the index is the truth for small and system fields). A file whose raw bytes fail
    /// the ``RawFilePrefilter`` is not decoded; a record whose small fields already rule it out is
    /// not read at all.
    func matchesInFiles(_ candidates: [RecordMetadata], query: Query) -> [QueryMatch] {
        let prefilter = RawFilePrefilter(query.predicate)
        var toRead: [RecordMetadata] = []
        var conditions: [RawFilePrefilter.Condition] = []
        for metadata in candidates {
            let condition = prefilter.condition(for: metadata)
            if case .known(false) = condition { continue }
            toRead.append(metadata)
            conditions.append(condition)
        }
        let journalBefore = journalStateAfterCommits()
        let matches = scanFiles(toRead, conditions, prefilter, query: query)
        // A commit by another process rewrites record files in place: a file read while it was
        // being written may have failed the prefilter although neither version would. When the
        // journal moved during the scan, the files are scanned again under the shared commit lock,
        // which no commit holds while writing (rare: a commit during a scan).
        guard let journalBefore, journalBefore != journalState() else { return matches }
        let lock = try? Sys.open(layout.lockFile, O_RDONLY)
        if let lock { try? Sys.lock(lock, shared: true, path: layout.lockFile) }
        defer {
            if let lock {
                Sys.unlock(lock)
                Sys.close(lock)
            }
        }
        return scanFiles(toRead, conditions, prefilter, query: query)
    }

    private func scanFiles(
        _ records: [RecordMetadata], _ conditions: [RawFilePrefilter.Condition], _ prefilter: RawFilePrefilter, query: Query
    ) -> [QueryMatch] {
        let predicate = query.predicate
        let sortKeys = query.sortDescriptors.map(\.key)
        @Sendable func match(_ metadata: RecordMetadata, _ full: Record) -> QueryMatch? {
            func value(_ key: String) -> FieldValue? {
                metadata.isLarge(key) ? full.fields[key] : Self.value(of: key, in: metadata)
            }
            guard predicate.evaluate(value) else { return nil }
            return QueryMatch(metadata: metadata, sortValues: sortKeys.map(value))
        }
        // Each guarded by its own lock: appended to from the batch's workers.
        let matches = Mutex<[QueryMatch]>([])
        let unread = Mutex<[Int]>([])
        RecordFileBatch.forEach(records.map(\.recordID), layout: layout) { i, bytes in
            guard let bytes else { return unread.withLock { $0.append(i) } }
            guard prefilter.admits(bytes, conditions[i]) else { return }
            guard let full = try? record(records[i].recordID, fromFile: bytes) else { return unread.withLock { $0.append(i) } }
            if let found = match(records[i], full) { matches.withLock { $0.append(found) } }
        }
        var result = matches.withLock { $0 }
        // Files the batch could not read or decode: read the careful way, which logs the damage.
        for i in unread.withLock({ $0 }).sorted() {
            do {
                if let found = match(records[i], try readRecordFile(records[i].recordID)) { result.append(found) }
            } catch {
                log(error.description)
            }
        }
        return result
    }

    /// Which journal file, how long, when last written: changes with every commit.
    private struct JournalState: Equatable {
        var inode: UInt64
        var size: Int64
        var seconds: Int
        var nanoseconds: Int
    }

    private func journalState() -> JournalState? {
        guard let st = try? Sys.fileStatus(layout.journal) else { return nil }
        return JournalState(
            inode: UInt64(st.st_ino), size: Int64(st.st_size), seconds: Int(st.st_mtim.tv_sec), nanoseconds: Int(st.st_mtim.tv_nsec))
    }

    /// The journal's state once no commit is writing record files (taken under the shared commit
    /// lock); nil when there is no lock file (nobody writes) or it cannot be taken.
    private func journalStateAfterCommits() -> JournalState? {
        guard let lock = try? Sys.open(layout.lockFile, O_RDONLY) else { return nil }
        defer { Sys.close(lock) }
        guard (try? Sys.lock(lock, shared: true, path: layout.lockFile)) != nil else { return nil }
        defer { Sys.unlock(lock) }
        return journalState()
    }
}

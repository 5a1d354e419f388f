import Foundation
import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A record a query matched, with the values it sorts on.
struct QueryMatch {
    /// Its position in the query's candidates (not a copy of its metadata: each copy retains
    /// every string and array the metadata holds).
    var position: Int
    /// One value for each sort descriptor, in order.
    var sortValues: [FieldValue?]
}

extension RecordDatabase {
    /// The full record a record file's bytes hold, read by a batch (``RecordFileBatch``) rather
    /// than by ``readRecordFile(_:)``: every full record a query reads comes through here or there.
    ///
    /// Merged with `metadata`, the index's metadata of the record that the query read (no lookup
    /// under the lock for each file), as ``readRecordFile(_:)`` merges (the file lags behind saves
    /// of small fields only: see ``merge(_:path:file:)``).
    ///
    /// - Throws: ``RecordStoreError/damagedRecord(_:path:reason:)``; the caller then reads the
    ///   record through ``readRecordFile(_:)``, which re-reads a half-written file under the lock.
    func record(_ metadata: RecordMetadata, fromFile bytes: UnsafeRawBufferPointer) throws(RecordStoreError) -> Record {
        if let merged = Self.merged(metadata, fromFile: bytes) { return merged }
        let id = metadata.recordID
        let file = try RecordFiles.record(id, fromFile: bytes, path: layout.recordPath(id.recordName))
        return try Self.merge(metadata, path: layout.recordPath(id.recordName)) { file }
    }

    /// The records of `candidates` at `positions` that match `query`, reading their files in parallel.
    ///
    /// A predicate's value for a key is the file's for a large field and the in-memory index's for
    /// the rest (the index is the truth for small and system fields). A file whose raw bytes fail
    /// the ``RawFilePrefilter`` is not decoded; a record whose small fields already rule it out is
    /// not read at all.
    func matchesInFiles(_ candidates: [RecordMetadata], at positions: [Int], query: Query) -> [QueryMatch] {
        let prefilter = RawFilePrefilter(query.predicate)
        var toRead: [Int] = []
        var conditions: [RawFilePrefilter.Condition] = []
        for i in positions {
            let condition = prefilter.condition(for: candidates[i])
            if case .known(false) = condition { continue }
            toRead.append(i)
            conditions.append(condition)
        }
        let journalBefore = journalStateAfterCommits()
        let scan = FileScan(candidates: candidates, positions: toRead, conditions: conditions, prefilter: prefilter)
        var (matches, unread) = scanFiles(scan, query: query)
        // A commit by another process rewrites record files in place: a file read while it was
        // being written may have failed the prefilter although neither version would. When the
        // journal moved during the scan, the files are scanned again under the shared commit lock,
        // which no commit holds while writing (rare: a commit during a scan).
        if let journalBefore, journalBefore != journalState() {
            (matches, unread) = whileNoCommitWrites { scanFiles(scan, query: query) } ?? scanFiles(scan, query: query)
        }
        // Files the batch could not read or decode: read the careful way, which logs the damage.
        // Not under the shared commit lock: that read takes the state lock, and a commit of this
        // process holds the state lock while it waits for the commit lock (see ``RecordDatabase``'s
        // lock order).
        for k in unread {
            let position = scan.positions[k]
            do {
                if let found = match(scan, at: position, in: try readRecordFile(scan.candidates[position].recordID), query: query) {
                    matches.append(found)
                }
            } catch {
                log(error.description)
            }
        }
        return matches
    }

    /// The records whose files a query scans: `candidates[positions[k]]`, whose file must meet `conditions[k]`.
    private struct FileScan: Sendable {
        var candidates: [RecordMetadata]
        var positions: [Int]
        var conditions: [RawFilePrefilter.Condition]
        var prefilter: RawFilePrefilter
    }

    /// `candidates[position]` as a match of `query`, its large fields from `full`; nil when it does not match.
    private func match(_ scan: FileScan, at position: Int, in full: Record, query: Query) -> QueryMatch? {
        let metadata = scan.candidates[position]
        func value(_ key: String) -> FieldValue? {
            metadata.isLarge(key) ? full.fields[key] : Self.value(of: key, in: metadata)
        }
        guard query.predicate.evaluate(value) else { return nil }
        return QueryMatch(position: position, sortValues: query.sortDescriptors.map(\.key).map(value))
    }

    /// Reads the scan's files in parallel (no lock of this database taken): the matches, and the
    /// positions in `scan.positions` of the files that could not be read or decoded, in order.
    private func scanFiles(_ scan: FileScan, query: Query) -> (matches: [QueryMatch], unread: [Int]) {
        // Each guarded by its own lock: appended to from the batch's workers.
        let matches = Mutex<[QueryMatch]>([])
        let unread = Mutex<[Int]>([])
        let ids = scan.positions.map { scan.candidates[$0].recordID }
        RecordFileBatch.forEach(ids, layout: layout) { k, bytes in
            guard let bytes else { return unread.withLock { $0.append(k) } }
            guard scan.prefilter.admits(bytes, scan.conditions[k]) else { return }
            let position = scan.positions[k]
            guard let full = try? record(scan.candidates[position], fromFile: bytes) else { return unread.withLock { $0.append(k) } }
            if let found = match(scan, at: position, in: full, query: query) { matches.withLock { $0.append(found) } }
        }
        return (matches.withLock { $0 }, unread.withLock { $0 }.sorted())
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
        whileNoCommitWrites { journalState() } ?? nil
    }
}

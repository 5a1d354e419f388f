import Foundation

/// Every record synced at least once, by record name: the bases for merges (``SyncState/records``).
///
/// In memory: a small index of what the record files held when last read or written (type, seq,
/// local tag: no base), and the changes made since, bases included, until ``save(in:)`` writes
/// them. A base not changed since is read from its file when asked for (``SyncedRecord/base``).
/// So memory grows with the records synced in one transaction, not with the database.
public struct SyncedRecords: Sendable, Equatable {
    /// What the index knows of one record file.
    struct Entry: Sendable, Equatable {
        var recordType: String
        var serverSeq: Int64
        var localTag: String?
    }

    /// The directory of the record files the index describes; nil before any was read or written.
    var directory: String?
    /// What the record files in ``directory`` held when last read or written, by record name.
    var index: [String: Entry] = [:]
    /// The records set since then, by name (nil: removed); bases in memory.
    var changes: [String: SyncedRecord?] = [:]

    public init() {}

    /// The synced version of the record named `recordName`, nil when it was never synced (or
    /// is deleted on both sides). Setting it takes effect on disk at the next ``SyncState/save(databasePath:)``.
    public subscript(recordName: String) -> SyncedRecord? {
        get {
            if let change = changes[recordName] { return change }
            guard let entry = index[recordName], let directory else { return nil }
            return SyncedRecord(
                recordType: entry.recordType, serverSeq: entry.serverSeq, localTag: entry.localTag,
                storedBase: .file(directory: directory, recordName: recordName))
        }
        set { changes[recordName] = .some(newValue) }
    }

    /// The names of every synced record (for a full scan: O(records)).
    public var keys: [String] {
        var names = index.keys.filter { changes[$0] == nil }
        for (name, change) in changes where change != nil { names.append(name) }
        return names
    }

    public var count: Int { keys.count }

    /// Replaces the index by the headers of the record files in `directory`; changes not saved
    /// are dropped.
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    mutating func read(from directory: String, removingLeftovers: Bool) throws(SyncError) {
        let headers = try SyncedRecordFiles.headers(in: directory, removingLeftovers: removingLeftovers)
        self.directory = directory
        index = headers.mapValues { Entry(recordType: $0.recordType, serverSeq: $0.serverSeq, localTag: $0.localTag) }
        changes = [:]
    }

    /// Writes the changes into the record files of `directory` (which must exist): written,
    /// renamed and removed through one ``DurableFileBatch``, durable when this returns; then
    /// the index takes them in. On failure the changes stay to be saved again (the files
    /// already replaced hold them too).
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    mutating func save(in directory: String) throws(SyncError) {
        guard !changes.isEmpty else { return }
        if self.directory != directory {
            // Saved somewhere new (never in practice): the index described other files.
            self.directory = directory
            index = [:]
        }
        var batch = DurableFileBatch(directory: directory)
        do throws(SyncError) {
            for (name, change) in changes {
                let fileName = SyncedRecordFiles.fileName(of: name)
                if let change {
                    try batch.write(SyncedRecordFiles.encode(name, change, base: try change.baseForSaving(named: name)), named: fileName)
                } else {
                    batch.remove(named: fileName)
                }
                // A file an earlier version named its own way goes, once the current one is in place.
                if let legacy = SyncedRecordFiles.legacyFileName(of: name) { batch.remove(named: legacy) }
            }
        } catch {
            batch.abandon()
            throw error
        }
        try batch.commit()
        for (name, change) in changes {
            index[name] = change.map { Entry(recordType: $0.recordType, serverSeq: $0.serverSeq, localTag: $0.localTag) }
        }
        changes = [:]
    }
}

extension SyncedRecord {
    /// The base to write into the file of this record (named `name`): a base that was never
    /// taken into memory is still the one in its file, whatever else was changed.
    fileprivate func baseForSaving(named name: String) throws(SyncError) -> String {
        switch storedBase {
        case .text(let text): text
        case .file(let directory, _): try SyncedRecordFiles.read(name, in: directory).base
        }
    }
}

import Foundation

/// A deleted record, kept for change tokens.
struct Tombstone {
    var seq: UInt64
    var recordID: RecordID
    var recordType: String
}

/// The in-memory index of a database: metadata of every record, by name, identity and reference.
struct RecordIndex {
    /// Every live record by name.
    var entries = RecordEntries()
    /// Record names by identity.
    var names: [UInt64: String] = [:]
    /// For each referenced record name: the referring record names, by field key.
    var referrers: [String: [String: Set<String>]] = [:]
    /// How many live records use each asset (by SHA-256): kept by ``insert(_:)`` and ``removeReferences(of:)``,
    /// so rebuilt with the index. An asset that drops out of here is collected (see ``AssetCollector``).
    var assetReferences: [String: Int] = [:]
    /// The last commit applied.
    var seq: UInt64 = 0
    var nextIdentity: UInt64 = RecordIndex.firstIdentity
    /// Deleted records, oldest first, for change tokens: only what a change set reports (the
    /// record's ID and type), not its metadata (up to ``tombstoneLimit`` of them stay in memory).
    var tombstones: [Tombstone] = []
    /// Change tokens older than this cannot be answered (their tombstones were dropped).
    var tombstoneHorizon: UInt64 = 0
    /// Records whose file lags behind their last save (one that wrote no file: see
    /// ``Record/savesRecordFile``): the background thread rewrites them a few at a time, and
    /// the next checkpoint all of them before it drops those journal lines. Rebuilt from the
    /// journal at open; empty after a checkpoint.
    var staleRecordFiles: Set<String> = []
    /// Lookup tables of indexed string fields: value → record names (``RecordDatabase/indexField(_:ofType:)``).
    var fieldIndexes: [IndexedField: [String: Set<String>]] = [:]

    /// Identities start above the FUSE root inode (1) and leave room for fixed inodes.
    static let firstIdentity: UInt64 = 16
    static let tombstoneLimit = 50_000

    /// Records a saved record (its file is written with the commit, or later: ``staleRecordFiles``).
    mutating func save(_ record: Record, seq: UInt64) {
        let name = record.recordID.recordName
        if let old = entries[name] {
            removeReferences(of: old)
            // An identity taken over from a record deleted in the same entry (takeIdentity).
            if let identity = old.storedIdentity, identity != record.identity, names[identity] == old.recordID.recordName {
                names[identity] = nil
            }
        }
        if record.savesRecordFile { staleRecordFiles.remove(name) } else { staleRecordFiles.insert(name) }
        insert(RecordMetadata(savedRecord: record, seq: seq))
    }

    @discardableResult
    mutating func delete(_ name: String, seq: UInt64) -> RecordMetadata? {
        guard let old = entries.removeValue(forKey: name) else { return nil }
        staleRecordFiles.remove(name)
        removeReferences(of: old)
        if let identity = old.storedIdentity { names[identity] = nil }
        tombstones.append(Tombstone(seq: seq, recordID: old.recordID, recordType: old.recordType))
        if tombstones.count > Self.tombstoneLimit {
            let dropped = tombstones.count - Self.tombstoneLimit / 2
            tombstoneHorizon = tombstones[dropped - 1].seq
            tombstones.removeFirst(dropped)
        }
        return old
    }

    private mutating func removeReferences(of metadata: RecordMetadata) {
        if !fieldIndexes.isEmpty { removeFromFieldIndexes(metadata) }
        metadata.forEachAsset { asset in
            let count = (assetReferences[asset.sha256] ?? 1) - 1
            assetReferences[asset.sha256] = count > 0 ? count : nil
        }
        let name = metadata.recordID.recordName
        metadata.forEachReference { key, ref in
            let target = ref.recordID.recordName
            referrers[target]?[key]?.remove(name)
            if referrers[target]?[key]?.isEmpty == true { referrers[target]?[key] = nil }
            if referrers[target]?.isEmpty == true { referrers[target] = nil }
        }
    }

    /// Metadata of the records that reference the record named `target` through field `key`
    /// (the reference index: no scan).
    func metadata(referringTo target: String, key: String) -> [RecordMetadata] {
        let names = referrers[target]?[key] ?? []
        var found: [RecordMetadata] = []
        found.reserveCapacity(names.count)
        for name in names { if let metadata = entries[name] { found.append(metadata) } }
        return found
    }

    /// Applies one journal entry (idempotent: replaying an applied entry changes nothing).
    /// Returns the deleted records' last metadata.
    @discardableResult
    mutating func apply(_ entry: JournalEntry) -> [RecordMetadata] {
        var deleted: [RecordMetadata] = []
        for id in entry.deletes {
            if let old = delete(id.recordName, seq: entry.seq) { deleted.append(old) }
        }
        for record in entry.saves { save(record, seq: entry.seq) }
        if let reserved = entry.reservedUpTo, reserved > nextIdentity { nextIdentity = reserved }
        if entry.seq > seq { seq = entry.seq }
        return deleted
    }

    /// Names of the records that a delete of `roots` removes too: `.deleteSelf` referrers, recursively.
    func cascade(from roots: [String], sparing spared: Set<String>) -> [String] {
        var result: [String] = []
        var seen = Set(roots)
        var queue = roots
        while let target = queue.popLast() {
            for (key, names) in referrers[target] ?? [:] {
                for name in names where !seen.contains(name) && !spared.contains(name) {
                    let holds = entries[name]?.field(key)?.references.contains {
                        $0.recordID.recordName == target && $0.action == .deleteSelf
                    }
                    if holds == true {
                        seen.insert(name)
                        result.append(name)
                        queue.append(name)
                    }
                }
            }
        }
        return result
    }
}

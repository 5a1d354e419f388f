import Foundation

/// A deleted record, kept for change tokens.
struct Tombstone {
    var seq: UInt64
    var recordID: RecordID
    var recordType: String
}

/// The index of a database: metadata of every record, by name, identity and reference.
///
/// The persistent metadata index (``MetadataIndexFile``, the records as of the last checkpoint)
/// under what the journal's commits changed since (the overlay, in memory). The tables below
/// (`names`, `referrers`, `assetReferences`, `fieldIndexes`, `tombstones`, `staleRecordFiles`)
/// hold the overlay's records only; read them through the methods that add the base's
/// (``name(identity:)``, ``referrers(to:)``, ``isAssetInUse(_:)``, …). A checkpoint writes the
/// overlay into the base and starts an empty one (``RecordDatabase/checkpoint(_:)``).
struct RecordIndex {
    /// Every live record by name.
    var entries = RecordEntries()
    /// Record names by identity (the overlay's records).
    var names: [UInt64: String] = [:]
    /// For each referenced record name: the referring record names, by field key (the overlay's records).
    var referrers: [String: [String: Set<String>]] = [:]
    /// How many of the overlay's records use each asset (by SHA-256): kept by ``insert(_:)`` and
    /// ``removeReferences(of:)``. An asset no record uses (``isAssetInUse(_:)``) is collected (see ``AssetCollector``).
    var assetReferences: [String: Int] = [:]
    /// The last commit applied.
    var seq: UInt64 = 0
    var nextIdentity: UInt64 = RecordIndex.firstIdentity
    /// Records deleted since the base's commit, oldest first, for change tokens: only what a
    /// change set reports (the record's ID and type), not its metadata (up to ``tombstoneLimit``;
    /// the base keeps older ones).
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

    /// An index of the records `base` holds, with nothing changed since.
    init(base: MetadataIndexFile? = nil) {
        entries = RecordEntries(base: base)
        if let header = base?.header {
            seq = header.seq
            nextIdentity = max(Self.firstIdentity, header.nextIdentity)
            tombstoneHorizon = header.tombstoneHorizon
        }
    }

    /// Identities start above the FUSE root inode (1) and leave room for fixed inodes.
    static let firstIdentity: UInt64 = 16
    static let tombstoneLimit = 50_000

    /// Records a saved record (its file is written with the commit, or later: ``staleRecordFiles``).
    mutating func save(_ record: Record, seq: UInt64) {
        let name = record.recordID.recordName
        if let old = entries.overlayValue(name) {
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
        let inOverlay = entries.overlayValue(name) != nil
        guard let old = entries.removeValue(forKey: name) else { return nil }
        staleRecordFiles.remove(name)
        if inOverlay {
            removeReferences(of: old)
            if let identity = old.storedIdentity, names[identity] == name { names[identity] = nil }
        }
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
        var found = (referrers[target]?[key] ?? []).compactMap { entries.overlayValue($0) }
        if let base = entries.base {
            for metadata in base.metadata(referringTo: target, key: key) where !entries.isShadowed(metadata.recordID.recordName) {
                found.append(metadata)
            }
        }
        return found
    }

    /// (key, name) of every record that references `target`: the overlay's and the base's.
    func referrers(to target: String) -> [(key: String, name: String)] {
        var found: [(key: String, name: String)] = []
        for (key, names) in referrers[target] ?? [:] { for name in names { found.append((key, name)) } }
        if let base = entries.base {
            for item in base.referrers(to: target) where !entries.isShadowed(item.name) { found.append(item) }
        }
        return found
    }

    /// Every record name some record may reference through `key` (missing records included), each
    /// once: the overlay's targets and the base's, whose referrers the overlay may all have
    /// changed since (``metadata(referringTo:key:)`` tells).
    func candidateTargets(key: String) -> Set<String> {
        var found = Set(referrers.compactMap { $0.value[key]?.isEmpty == false ? $0.key : nil })
        if let base = entries.base { found.formUnion(base.targets(key: key)) }
        return found
    }

    /// The name of the record with this identity; nil when none has it.
    func name(identity: UInt64) -> String? {
        if let name = names[identity] { return name }
        guard let base = entries.base, let name = base.name(identity: identity) else { return nil }
        guard entries.isShadowed(name) else { return name }
        return entries.overlayValue(name)?.storedIdentity == identity ? name : nil
    }

    /// Whether a live record uses the asset `sha256`.
    func isAssetInUse(_ sha256: String) -> Bool {
        if assetReferences[sha256] != nil { return true }
        guard let base = entries.base else { return false }
        return base.users(ofAsset: sha256).contains { !entries.isShadowed($0) }
    }

    /// Tombstones of commits after `seq`, oldest first: the base's and the overlay's.
    func tombstones(after seq: UInt64) -> [Tombstone] {
        var found: [Tombstone] = []
        if let base = entries.base, seq < base.header.seq { found = base.tombstones(after: seq) }
        for tombstone in tombstones where tombstone.seq > seq { found.append(tombstone) }
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
            for (key, name) in referrers(to: target) where !seen.contains(name) && !spared.contains(name) {
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
        return result
    }
}

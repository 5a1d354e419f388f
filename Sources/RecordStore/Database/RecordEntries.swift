/// The index's records by name: the persistent metadata index (``base``, the records as of the
/// last checkpoint) under an overlay of what the journal's commits changed since, held in memory.
///
/// The overlay is a dense array of metadata and a map from name to position (a
/// `[String: RecordMetadata]` would keep each 144-byte metadata inline in a hash table twice the
/// size). ``shadowedInBase`` names the base's records the overlay saved again or deleted: a read
/// finds a name in the overlay, else nowhere if it is shadowed, else in the base. With no base
/// (a new index being built, a test) the overlay is everything.
struct RecordEntries: Sequence {
    /// The records as of the last checkpoint; nil: none (everything is in the overlay).
    private(set) var base: MetadataIndexFile?
    /// Position in ``overlay`` of each record, by name (the name is its `recordID.recordName`).
    private var positions: [String: Int] = [:]
    /// Records saved since the base's commit (insertion order, a removed one replaced by the last).
    private(set) var overlay: [RecordMetadata] = []
    /// Names of base records saved again or deleted since the base's commit.
    private(set) var shadowedInBase: Set<String> = []

    init(base: MetadataIndexFile? = nil) {
        self.base = base
    }

    /// The base's count is its header's: a damaged file's may be anything, so never below zero.
    var count: Int { Swift.max(0, (base?.header.count ?? 0) - shadowedInBase.count + overlay.count) }

    subscript(name: String) -> RecordMetadata? {
        get {
            if let position = positions[name] { return overlay[position] }
            guard let base, !shadowedInBase.contains(name) else { return nil }
            return base.metadata(named: name)
        }
        set {
            guard let newValue else {
                removeValue(forKey: name)
                return
            }
            if positions[name] == nil { shadow(name) }
            // One hash lookup: the position of the record, or the next one, stored if new.
            let next = overlay.count
            let position = Self.value(&positions[name, default: next])
            if position == next {
                overlay.append(newValue)
            } else {
                overlay[position] = newValue
            }
        }
    }

    /// The record's metadata if the overlay holds it (saved since the base's commit).
    func overlayValue(_ name: String) -> RecordMetadata? { positions[name].map { overlay[$0] } }

    /// The overlay's records that `matches` accepts, among those `names` names (every one of the
    /// overlay's when nil). Each is looked at in place, by position, and only those accepted are
    /// copied: a copy retains every field, and `filter` over the overlay copied each record to
    /// compare one field.
    func overlayValues(named names: Set<String>? = nil, where matches: (RecordMetadata) -> Bool) -> [RecordMetadata] {
        var found: [RecordMetadata] = []
        if let names {
            for name in names {
                if let position = positions[name], matches(overlay[position]) { found.append(overlay[position]) }
            }
        } else {
            for position in overlay.indices where matches(overlay[position]) { found.append(overlay[position]) }
        }
        return found
    }

    /// Whether the base's row for `name` (if any) is out of date: the overlay saved or deleted it.
    func isShadowed(_ name: String) -> Bool { positions[name] != nil || shadowedInBase.contains(name) }

    /// Names of base records deleted since the base's commit (not saved again).
    var namesDeletedFromBase: [String] { shadowedInBase.filter { positions[$0] == nil } }

    private mutating func shadow(_ name: String) {
        guard let base, !shadowedInBase.contains(name), base.contains(name) else { return }
        shadowedInBase.insert(name)
    }

    /// What the `inout` access holds (which, through `subscript(_:default:)`, stores the default).
    private static func value(_ slot: inout Int) -> Int { slot }

    /// Removes a record (in the overlay, the last one moves into its place); returns what was there.
    @discardableResult
    mutating func removeValue(forKey name: String) -> RecordMetadata? {
        guard let position = positions.removeValue(forKey: name) else {
            // Not changed since the base: the base's row, if any, is shadowed from now on.
            guard let base, !shadowedInBase.contains(name), let removed = base.metadata(named: name) else { return nil }
            shadowedInBase.insert(name)
            return removed
        }
        let removed = overlay[position]
        let last = overlay.removeLast()
        if position < overlay.count {
            overlay[position] = last
            positions[last.recordID.recordName] = position
        }
        shadow(name)
        return removed
    }

    /// Calls `body` with each record's metadata (of `recordType` only, when given), one at a time:
    /// the base's that the overlay does not shadow, then the overlay's. Nothing is copied but what
    /// `body` keeps.
    func forEachValue(ofType recordType: String? = nil, _ body: (RecordMetadata) -> Void) {
        if let base {
            let visit = { (metadata: RecordMetadata) in if !isShadowed(metadata.recordID.recordName) { body(metadata) } }
            if let recordType { base.forEachRecord(ofType: recordType, visit) } else { base.forEachRecord(visit) }
        }
        for position in overlay.indices where recordType == nil || overlay[position].recordType == recordType { body(overlay[position]) }
    }

    /// Every record's metadata: the overlay's, and the base's that it does not shadow (a scan
    /// of the whole base: for the few callers that must see everything).
    var values: [RecordMetadata] {
        guard base != nil else { return overlay }
        var all: [RecordMetadata] = []
        all.reserveCapacity(Swift.min(count, 1 << 20))  // a hint from the file's header: bounded
        forEachValue { all.append($0) }
        return all
    }

    /// The records of `recordType`: the base's by its type index, and the overlay's.
    func values(ofType recordType: String) -> [RecordMetadata] {
        var found: [RecordMetadata] = []
        forEachValue(ofType: recordType) { found.append($0) }
        return found
    }

    /// The names of the records of `recordType`: the base's by its type index, and the overlay's
    /// (no metadata decoded or copied).
    func names(ofType recordType: String) -> [String] {
        var found = base?.names(ofType: recordType) ?? []
        found.removeAll { isShadowed($0) }
        for position in overlay.indices where overlay[position].recordType == recordType {
            found.append(overlay[position].recordID.recordName)
        }
        return found
    }

    /// The records saved by a commit after `seq` (unordered).
    func values(changedAfter seq: UInt64) -> [RecordMetadata] {
        var found: [RecordMetadata] = []
        if let base, seq < base.header.seq {
            found = base.metadata(changedAfter: seq).filter { !isShadowed($0.recordID.recordName) }
        }
        // By position here and above: `for metadata in overlay` copied every record's metadata
        // (the retains of its fields) to compare one field; a rename's plan asks this of an
        // overlay of hundreds of records.
        for position in overlay.indices where overlay[position].seq > seq { found.append(overlay[position]) }
        return found
    }

    mutating func reserveCapacity(_ count: Int) {
        positions.reserveCapacity(count)
        overlay.reserveCapacity(count)
    }

    func makeIterator() -> some IteratorProtocol<(key: String, value: RecordMetadata)> {
        values.lazy.map { (key: $0.recordID.recordName, value: $0) }.makeIterator()
    }
}

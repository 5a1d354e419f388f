/// The index's records by name: a dense array of metadata and a map from name to position.
///
/// A `[String: RecordMetadata]` keeps each metadata (about 144 bytes) inline in its hash table,
/// which has twice as many slots as entries at worst (a power of two above 4/3 of the count), so
/// at 1,000,000 records the table alone took about 335 MB, and twice that while it grew. Here the
/// table holds a name and an integer per slot and the metadata sits once in an array. Iteration
/// order is the array's (insertion order, with a removed entry replaced by the last one).
struct RecordEntries: Sequence {
    /// Position in ``values`` of each record, by name (the name is its `recordID.recordName`).
    private var positions: [String: Int] = [:]
    private(set) var values: [RecordMetadata] = []
    /// While a background checkpoint writes the snapshot of an earlier moment (see
    /// ``RecordDatabase/startCheckpoint(_:)``): each record's metadata at that moment, kept at its
    /// first change since. Nil when no checkpoint runs; memory is one entry per record changed
    /// while it runs.
    private var earlier: [String: Earlier]?

    /// A record's metadata at the moment ``keepEarlierValues()`` was called (nil: it did not exist).
    private struct Earlier {
        var metadata: RecordMetadata?
    }

    var count: Int { values.count }
    var isEmpty: Bool { values.isEmpty }

    subscript(name: String) -> RecordMetadata? {
        get { positions[name].map { values[$0] } }
        set {
            guard let newValue else {
                removeValue(forKey: name)
                return
            }
            if earlier != nil { keepEarlier(name, positions[name].map { values[$0] }) }
            // One hash lookup: the position of the record, or the next one, stored if new.
            let next = values.count
            let position = Self.value(&positions[name, default: next])
            if position == next {
                values.append(newValue)
            } else {
                values[position] = newValue
            }
        }
    }

    /// What the `inout` access holds (which, through `subscript(_:default:)`, stores the default).
    private static func value(_ slot: inout Int) -> Int { slot }

    /// Removes a record (the last one moves into its place); returns what was there.
    @discardableResult
    mutating func removeValue(forKey name: String) -> RecordMetadata? {
        guard let position = positions.removeValue(forKey: name) else { return nil }
        let removed = values[position]
        if earlier != nil { keepEarlier(name, removed) }
        let last = values.removeLast()
        if position < values.count {
            values[position] = last
            positions[last.recordID.recordName] = position
        }
        return removed
    }

    /// Names of every record, in iteration order.
    var names: [String] { values.map(\.recordID.recordName) }

    /// From now on, keeps each record's metadata as it is now at its first change (see
    /// ``valueWhenKept(_:)``), until ``forgetEarlierValues()``.
    mutating func keepEarlierValues() { earlier = [:] }

    mutating func forgetEarlierValues() { earlier = nil }

    /// The record's metadata when ``keepEarlierValues()`` was last called, if it was kept since
    /// (nil: the record did not exist then); its current metadata otherwise.
    func valueWhenKept(_ name: String) -> RecordMetadata? {
        if let kept = earlier?[name] { return kept.metadata }
        return self[name]
    }

    private mutating func keepEarlier(_ name: String, _ value: RecordMetadata?) {
        guard earlier?[name] == nil else { return }  // changed before: its earlier value is kept
        earlier?[name] = Earlier(metadata: value)
    }

    mutating func reserveCapacity(_ count: Int) {
        positions.reserveCapacity(count)
        values.reserveCapacity(count)
    }

    func makeIterator() -> some IteratorProtocol<(key: String, value: RecordMetadata)> {
        values.lazy.map { (key: $0.recordID.recordName, value: $0) }.makeIterator()
    }
}

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

    var count: Int { values.count }
    var isEmpty: Bool { values.isEmpty }

    subscript(name: String) -> RecordMetadata? {
        get { positions[name].map { values[$0] } }
        set {
            guard let newValue else {
                removeValue(forKey: name)
                return
            }
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
        let last = values.removeLast()
        if position < values.count {
            values[position] = last
            positions[last.recordID.recordName] = position
        }
        return removed
    }

    mutating func reserveCapacity(_ count: Int) {
        positions.reserveCapacity(count)
        values.reserveCapacity(count)
    }

    func makeIterator() -> some IteratorProtocol<(key: String, value: RecordMetadata)> {
        values.lazy.map { (key: $0.recordID.recordName, value: $0) }.makeIterator()
    }
}

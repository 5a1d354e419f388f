import Foundation

/// A string field of one record type that the index keeps a lookup table for: value → the
/// names of the records holding it (``RecordDatabase/indexField(_:ofType:)``).
struct IndexedField: Hashable, Sendable {
    var recordType: String
    var key: String
}

extension RecordIndex {
    /// Starts keeping a lookup table for `field` (built now from every record: one scan).
    mutating func addFieldIndex(_ field: IndexedField) {
        guard fieldIndexes[field] == nil else { return }
        var table: [String: Set<String>] = [:]
        for metadata in entries.values where metadata.recordType == field.recordType {
            if let value = metadata.field(field.key)?.stringValue { table[value, default: []].insert(metadata.recordID.recordName) }
        }
        fieldIndexes[field] = table
    }

    /// Adds `metadata` to the lookup tables of its type's indexed fields.
    mutating func addToFieldIndexes(_ metadata: borrowing RecordMetadata) {
        // The fields are copied out first: a `keys` view held across the loop would share the
        // tables' storage, so that every insert copied a whole table (every note's versions).
        for field in indexedFields(of: metadata.recordType) {
            if let value = metadata.field(field.key)?.stringValue {
                fieldIndexes[field]?[value, default: []].insert(metadata.recordID.recordName)
            }
        }
    }

    private func indexedFields(of recordType: String) -> [IndexedField] {
        fieldIndexes.isEmpty ? [] : fieldIndexes.keys.filter { $0.recordType == recordType }
    }

    /// Removes `metadata` from the lookup tables of its type's indexed fields.
    mutating func removeFromFieldIndexes(_ metadata: RecordMetadata) {
        for field in indexedFields(of: metadata.recordType) {
            guard let value = metadata.field(field.key)?.stringValue else { continue }
            fieldIndexes[field]?[value]?.remove(metadata.recordID.recordName)
            if fieldIndexes[field]?[value]?.isEmpty == true { fieldIndexes[field]?[value] = nil }
        }
    }

    /// The records of `recordType` whose small string field `key` is `value`: from the field's
    /// table when there is one, else by a scan.
    func metadata(ofType recordType: String, whereField key: String, equals value: String) -> [RecordMetadata] {
        if let table = fieldIndexes[IndexedField(recordType: recordType, key: key)] {
            return (table[value] ?? []).compactMap { entries[$0] }
        }
        return entries.values.filter { $0.recordType == recordType && $0.field(key)?.stringValue == value }
    }
}

extension RecordDatabase {
    /// Keeps a lookup table for the string field `key` of records of `recordType` in this
    /// instance's index, so that ``metadata(ofType:whereField:equals:)`` (and a commit hook's
    /// ``PendingCommit/records(ofType:whereField:equals:)``) answer without a scan. Built now by one
    /// scan of the index, then kept with every change (its own, other processes', a reload).
    /// Only small values are found (strings up to 256 bytes: the index holds no larger ones).
    public func indexField(_ key: String, ofType recordType: String) {
        state.withLock { $0.index.addFieldIndex(IndexedField(recordType: recordType, key: key)) }
    }

    /// Metadata of the records of `recordType` whose string field `key` is `value` (after catching
    /// up with other processes' commits).
    public func metadata(ofType recordType: String, whereField key: String, equals value: String) -> [RecordMetadata] {
        try? refresh()
        return state.withLock { $0.index.metadata(ofType: recordType, whereField: key, equals: value) }
    }

    /// The values the string field `key` of records of `recordType` holds (each once, unordered),
    /// from the field's lookup table; nil when ``indexField(_:ofType:)`` keeps none for it.
    public func indexedValues(ofField key: String, ofType recordType: String) -> [String]? {
        state.withLock { state in state.index.fieldIndexes[IndexedField(recordType: recordType, key: key)].map { Array($0.keys) } }
    }
}

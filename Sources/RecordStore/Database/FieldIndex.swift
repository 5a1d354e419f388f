import Foundation

/// A string field of one record type that the index keeps a lookup table for: value → the
/// names of the records holding it (``RecordDatabase/indexField(_:ofType:)``).
struct IndexedField: Hashable, Sendable {
    var recordType: String
    var key: String
}

extension RecordIndex {
    /// Starts keeping a lookup table for `field` of the overlay's records (built now by a scan of
    /// the overlay; the base answers for its own records from its `strings` table).
    mutating func addFieldIndex(_ field: IndexedField) {
        guard fieldIndexes[field] == nil else { return }
        var table: [String: Set<String>] = [:]
        for metadata in entries.overlay where metadata.recordType == field.recordType {
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

    /// The records of `recordType` whose small string field `key` is `value`: the overlay's from
    /// the field's table when there is one (else by a scan of the overlay), the base's from its
    /// `strings` table.
    func metadata(ofType recordType: String, whereField key: String, equals value: String) -> [RecordMetadata] {
        var found: [RecordMetadata]
        if let table = fieldIndexes[IndexedField(recordType: recordType, key: key)] {
            found = (table[value] ?? []).compactMap { entries.overlayValue($0) }
        } else {
            found = entries.overlayValues { $0.recordType == recordType && $0.field(key)?.stringValue == value }
        }
        if let base = entries.base {
            for metadata in base.metadata(ofType: recordType, whereField: key, equals: value)
            where !entries.isShadowed(metadata.recordID.recordName) {
                found.append(metadata)
            }
        }
        return found
    }

    /// The records of `recordType` whose small string field `key` is `value` and that reference
    /// `target` through `referenceKey` (nil: that hold no reference in it): the overlay's by a
    /// look at its records, the base's by one query of its `strings` and `refs` tables.
    func metadata(
        ofType recordType: String, whereField key: String, equals value: String, referringTo target: String?, through referenceKey: String
    )
        -> [RecordMetadata]
    {
        func holds(_ metadata: RecordMetadata) -> Bool {
            guard metadata.recordType == recordType, metadata.field(key)?.stringValue == value else { return false }
            guard target == nil else { return true }
            return metadata.field(referenceKey) == nil && !metadata.isLarge(referenceKey)
        }
        // Compared in place: the overlay's part of the text indexer's namesake lookups took 849
        // samples of a perf of 3,000 renames across folders when each referrer of the folder was
        // copied out to compare one title, 520 without.
        var found = entries.overlayValues(named: target.map { referrers[$0]?[referenceKey] ?? [] }, where: holds)
        if let base = entries.base {
            let rows =
                target.map { base.metadata(ofType: recordType, whereField: key, equals: value, referringTo: $0, through: referenceKey) }
                ?? base.metadata(ofType: recordType, whereField: key, equals: value, withoutReferenceIn: referenceKey)
            for metadata in rows where !entries.isShadowed(metadata.recordID.recordName) && holds(metadata) {
                found.append(metadata)
            }
        }
        return found
    }

    /// The records of `recordType` that may hold `value` in `key` as `==` compares (a string, or a
    /// reference whose record name it is; a system key as ``RecordDatabase/value(of:in:)`` maps
    /// it): every one of the overlay's, and the base's found by its `strings` and `refs` tables
    /// (values compared in NFC, as Swift compares strings). A superset: the caller evaluates.
    func candidates(ofType recordType: String, key: String, equalTo value: String) -> [RecordMetadata] {
        guard let base = entries.base else { return entries.values(ofType: recordType) }
        switch key {
        case "recordName":
            let names = Set([value, value.precomposedStringWithCanonicalMapping, value.decomposedStringWithCanonicalMapping])
            return names.compactMap { entries[$0] }.filter { $0.recordType == recordType }
        case "recordID", "recordType", "creationDate", "modificationDate", "recordChangeTag":
            return entries.values(ofType: recordType)
        default:
            break
        }
        var found = entries.overlayValues { $0.recordType == recordType }
        var seen = Set(found.map(\.recordID.recordName))
        func add(_ metadata: RecordMetadata) {
            let name = metadata.recordID.recordName
            guard metadata.recordType == recordType, !entries.isShadowed(name), seen.insert(name).inserted else { return }
            found.append(metadata)
        }
        let normalized = MetadataIndexFile.normalized(value)
        for metadata in base.metadata(ofType: recordType, whereField: key, equals: value) { add(metadata) }
        for target in Set([value, normalized, value.decomposedStringWithCanonicalMapping]) {
            for metadata in base.metadata(referringTo: target, key: key) { add(metadata) }
        }
        return found
    }

    /// The values the small string field `key` of records of `recordType` holds, each once: the
    /// overlay's and the base's (a value only shadowed base records held is checked again).
    func values(ofField key: String, ofType recordType: String) -> [String] {
        var values = Set(entries.overlay.compactMap { $0.recordType == recordType ? $0.field(key)?.stringValue : nil })
        guard let base = entries.base else { return Array(values) }
        var suspect: Set<String> = []
        for name in entries.shadowedInBase {
            if let old = base.metadata(named: name), old.recordType == recordType, let value = old.field(key)?.stringValue {
                suspect.insert(value)
            }
        }
        for value in base.values(ofField: key, ofType: recordType) where !values.contains(value) {
            if suspect.contains(value), metadata(ofType: recordType, whereField: key, equals: value).isEmpty { continue }
            values.insert(value)
        }
        return Array(values)
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

    /// Metadata of the records of `recordType` whose small string field `key` (a string of up to
    /// 256 bytes) is `value` and that reference `target` through `referenceKey` (nil: that hold no
    /// reference in it): the records of one folder with one name, say, found without reading the
    /// folder's other records or the other folders' records of that name.
    public func metadata(
        ofType recordType: String, whereField key: String, equals value: String, referringTo target: RecordID?, through referenceKey: String
    ) -> [RecordMetadata] {
        state.withLock {
            $0.index.metadata(ofType: recordType, whereField: key, equals: value, referringTo: target?.recordName, through: referenceKey)
        }
    }

    /// The values the string field `key` of records of `recordType` holds (each once, unordered),
    /// from the field's lookup table; nil when ``indexField(_:ofType:)`` keeps none for it.
    public func indexedValues(ofField key: String, ofType recordType: String) -> [String]? {
        state.withLock { state in
            state.index.fieldIndexes[IndexedField(recordType: recordType, key: key)] == nil
                ? nil : state.index.values(ofField: key, ofType: recordType)
        }
    }
}

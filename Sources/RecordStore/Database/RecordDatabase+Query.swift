import Foundation

extension RecordDatabase {
    /// Runs a query and returns one page of full records.
    ///
    /// Predicates on small fields and system fields are answered from memory; `key == reference`
    /// uses the reference index. Large fields (a note's text) are read from record files as
    /// needed. Damaged record files are skipped and logged.
    public func query(_ query: Query, resultsLimit: Int? = nil) throws(RecordStoreError) -> QueryResult {
        try page(of: query, from: 0, resultsLimit: resultsLimit)
    }

    /// The next page after `cursor`.
    public func query(continuing cursor: QueryCursor, resultsLimit: Int? = nil) throws(RecordStoreError) -> QueryResult {
        try page(of: cursor.query, from: cursor.offset, resultsLimit: resultsLimit)
    }

    /// Metadata of every record matching `query`, sorted (large fields are read only when the
    /// predicate or sort needs them).
    public func queryMetadata(_ query: Query) -> [RecordMetadata] {
        let candidates: [RecordMetadata] = state.withLock { state in
            if let (key, name) = query.predicate.referenceConstraint {
                return (state.index.referrers[name]?[key] ?? []).compactMap { state.index.entries[$0] }
            }
            return state.index.entries.values.filter { $0.recordType == query.recordType }
        }
        let neededKeys = query.predicate.keys.union(query.sortDescriptors.map(\.key))
        var matches: [(metadata: RecordMetadata, full: Record?)] = []
        for metadata in candidates where metadata.recordType == query.recordType {
            var full: Record?
            if neededKeys.contains(where: metadata.isLarge) {
                do { full = try readRecordFile(metadata.recordID) } catch {
                    log(error.description)
                    continue
                }
            }
            let source = full ?? metadata.record
            if query.predicate.evaluate({ Self.value(of: $0, in: source) }) { matches.append((metadata, full)) }
        }
        if !query.sortDescriptors.isEmpty {
            matches.sort { a, b in
                for descriptor in query.sortDescriptors {
                    let x = Self.value(of: descriptor.key, in: a.full ?? a.metadata.record)
                    let y = Self.value(of: descriptor.key, in: b.full ?? b.metadata.record)
                    if let order = Self.order(x, y), order != .orderedSame {
                        return (order == .orderedAscending) == descriptor.ascending
                    }
                }
                return a.metadata.recordID < b.metadata.recordID
            }
        }
        return matches.map(\.metadata)
    }

    private func page(of query: Query, from offset: Int, resultsLimit: Int?) throws(RecordStoreError) -> QueryResult {
        let all = queryMetadata(query)
        let end = resultsLimit.map { min(all.count, offset + max(1, $0)) } ?? all.count
        var records: [Record] = []
        if offset < end {
            for metadata in all[offset..<end] {
                if metadata.sizes.isEmpty {
                    records.append(metadata.record)
                    continue
                }
                do { records.append(try readRecordFile(metadata.recordID)) } catch {
                    log(error.description)
                }
            }
        }
        let cursor = end < all.count ? QueryCursor(query: query, offset: end) : nil
        return QueryResult(records: records, cursor: cursor)
    }

    /// A field or system field of a record, as predicates and sorts see it.
    static func value(of key: String, in record: Record) -> FieldValue? {
        switch key {
        case "recordName": .string(record.recordID.recordName)
        case "recordID": .reference(Reference(recordID: record.recordID, action: .none))
        case "recordType": .string(record.recordType)
        case "creationDate": record.creationDate.map(FieldValue.date)
        case "modificationDate": record.modificationDate.map(FieldValue.date)
        case "recordChangeTag": record.recordChangeTag.map(FieldValue.string)
        default: record.fields[key]
        }
    }

    /// Orders two values of the same kind; missing values sort first.
    static func order(_ a: FieldValue?, _ b: FieldValue?) -> ComparisonResult? {
        switch (a, b) {
        case (nil, nil): return .orderedSame
        case (nil, _): return .orderedAscending
        case (_, nil): return .orderedDescending
        case (.string(let x)?, .string(let y)?): return x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
        case (.date(let x)?, .date(let y)?): return x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
        case (.bool(let x)?, .bool(let y)?): return x == y ? .orderedSame : (!x ? .orderedAscending : .orderedDescending)
        default:
            guard let x = a?.numeric, let y = b?.numeric else { return nil }
            return x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
        }
    }
}

extension FieldValue {
    fileprivate var numeric: Double? {
        switch self {
        case .int64(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }
}

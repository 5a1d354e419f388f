import Foundation
import Synchronization

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
        let typed = candidates.filter { $0.recordType == query.recordType }
        // Records whose needed fields are all in memory are tested there; the others are read
        // and tested in parallel chunks, keeping only the matches.
        let predicate = query.predicate
        var matches: [(metadata: RecordMetadata, full: Record?)] = []
        var fromFiles: [RecordMetadata] = []
        for metadata in typed {
            if neededKeys.contains(where: metadata.isLarge) {
                fromFiles.append(metadata)
            } else if predicate.evaluate({ Self.value(of: $0, in: metadata.record) }) {
                matches.append((metadata, nil))
            }
        }
        if !fromFiles.isEmpty {
            let chunks = max(1, min(fromFiles.count / 16, ProcessInfo.processInfo.activeProcessorCount * 4))
            let found = Mutex<[(metadata: RecordMetadata, full: Record?)]>([])
            let candidates = fromFiles
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                var local: [(metadata: RecordMetadata, full: Record?)] = []
                for i in stride(from: chunk, to: candidates.count, by: chunks) {
                    do {
                        let full = try readRecordFile(candidates[i].recordID)
                        if predicate.evaluate({ Self.value(of: $0, in: full) }) { local.append((candidates[i], full)) }
                    } catch {
                        log("\(error)")
                    }
                }
                found.withLock { $0 += local }
            }
            matches += found.withLock { $0 }
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
            let page = all[offset..<end]
            let files = readRecordFiles(page.filter { !$0.sizes.isEmpty }.map(\.recordID))
            for metadata in page {
                if metadata.sizes.isEmpty {
                    records.append(metadata.record)
                    continue
                }
                switch files[metadata.recordID] {
                case .success(let record)?: records.append(record)
                case .failure(let error)?: log(error.description)
                case nil: break
                }
            }
        }
        let cursor = end < all.count ? QueryCursor(query: query, offset: end) : nil
        return QueryResult(records: records, cursor: cursor)
    }

    /// Reads many record files, in parallel chunks (one file read and parse is the cost of a
    /// query on a large field, and of every full record a query returns).
    func readRecordFiles(_ ids: [RecordID]) -> [RecordID: Result<Record, RecordStoreError>] {
        guard ids.count > 32 else {
            var results: [RecordID: Result<Record, RecordStoreError>] = [:]
            for id in ids { results[id] = Result { () throws(RecordStoreError) in try readRecordFile(id) } }
            return results
        }
        let chunks = min(ids.count / 16, ProcessInfo.processInfo.activeProcessorCount * 4)
        let results = Mutex<[RecordID: Result<Record, RecordStoreError>]>([:])
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            var local: [RecordID: Result<Record, RecordStoreError>] = [:]
            for i in stride(from: chunk, to: ids.count, by: chunks) {
                local[ids[i]] = Result { () throws(RecordStoreError) in try readRecordFile(ids[i]) }
            }
            results.withLock { $0.merge(local) { a, _ in a } }
        }
        return results.withLock { $0 }
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

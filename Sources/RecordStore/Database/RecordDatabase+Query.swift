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
        // Copied out under the lock, tested outside it (a predicate may take long over a million records).
        let narrowed = narrowedCandidates(query)
        let candidates: [RecordMetadata] = state.withLock { state in
            // An answer from ahead of this process (another one committed since it last read the
            // journal) may describe records newer than those tested here: not used.
            let narrowed = narrowed.flatMap { $0.seq <= state.index.seq ? $0 : nil }
            if let (key, name) = query.predicate.referenceConstraint {
                let referrers = state.index.metadata(referringTo: name, key: key)
                return narrowed.map { n in referrers.filter(n.mayMatch) } ?? referrers
            }
            if let narrowed {
                // The source's names, and whatever changed after its token: looked up, not scanned.
                var result: [RecordMetadata] = []
                for name in narrowed.names.union(narrowed.alwaysTested) {
                    if let entry = state.index.entries[name], entry.recordType == query.recordType, entry.seq <= narrowed.seq {
                        result.append(entry)
                    }
                }
                for entry in state.index.entries.values(changedAfter: narrowed.seq) where entry.recordType == query.recordType {
                    result.append(entry)
                }
                return result
            }
            if let (key, value) = query.predicate.stringEqualityConstraint {
                return state.index.candidates(ofType: query.recordType, key: key, equalTo: value)
            }
            return state.index.entries.values(ofType: query.recordType)
        }
        let neededKeys = Array(query.predicate.keys.union(query.sortDescriptors.map(\.key)))
        let sortKeys = query.sortDescriptors.map(\.key)
        // Records whose needed fields are all in memory are tested there; the others' files are
        // scanned (see ``matchesInFiles(_:at:query:)``).
        let predicate = query.predicate
        var matches: [QueryMatch] = []
        // Positions in `candidates` (not copies of their metadata: a scan may hold 100,000s).
        var fromFiles: [Int] = []
        for i in candidates.indices where candidates[i].recordType == query.recordType {
            if neededKeys.contains(where: candidates[i].isLarge) {
                fromFiles.append(i)
            } else if predicate.evaluate({ Self.value(of: $0, in: candidates[i]) }) {
                matches.append(QueryMatch(position: i, sortValues: sortKeys.map { Self.value(of: $0, in: candidates[i]) }))
            }
        }
        if !fromFiles.isEmpty { matches += matchesInFiles(candidates, at: fromFiles, query: query) }
        guard !query.sortDescriptors.isEmpty else { return matches.map { candidates[$0.position] } }
        let columns = SortColumns(matches, of: candidates, descriptors: query.sortDescriptors)
        return columns.sortedPositions(matches).map { candidates[$0] }
    }

    private func page(of query: Query, from offset: Int, resultsLimit: Int?) throws(RecordStoreError) -> QueryResult {
        let all = queryMetadata(query)
        let end = resultsLimit.map { min(all.count, offset + max(1, $0)) } ?? all.count
        var records: [Record] = []
        if offset < end {
            let page = all[offset..<end]
            // The files of the partial records, read in one batch; `fileSlots[k]` is where the
            // page's `k`th record's result is (the records the index holds whole need none).
            var fromFiles: [RecordMetadata] = []
            var fileSlots: [Int] = []
            fileSlots.reserveCapacity(page.count)
            for metadata in page {
                fileSlots.append(metadata.isPartial ? fromFiles.count : -1)
                if metadata.isPartial { fromFiles.append(metadata) }
            }
            let files = readRecordFiles(fromFiles)
            records.reserveCapacity(page.count)
            for (metadata, slot) in zip(page, fileSlots) {
                guard slot >= 0 else {
                    records.append(metadata.record)
                    continue
                }
                switch files[slot] {
                case .success(let record): records.append(record)
                case .failure(let error): log(error.description)
                }
            }
        }
        let cursor = end < all.count ? QueryCursor(query: query, offset: end) : nil
        return QueryResult(records: records, cursor: cursor)
    }

    /// Reads the record files of the records `metadata` describes, in parallel (one file read and
    /// parse is the cost of every full record a query returns); results in the order of `metadata`.
    func readRecordFiles(_ metadata: [RecordMetadata]) -> [Result<Record, RecordStoreError>] {
        let read = BatchSlots<Record>(count: metadata.count)
        RecordFileBatch.forEach(metadata.map(\.recordID), layout: layout) { i, bytes in
            guard let bytes, let record = try? record(metadata[i], fromFile: bytes) else { return }
            read.set(i, record)
        }
        // What the batch could not read or decode is read again the careful way, which reports it.
        return read.take().enumerated().map { i, record in
            record.map { .success($0) } ?? Result { () throws(RecordStoreError) in try readRecordFile(metadata[i].recordID) }
        }
    }

    /// A field or system field of a record (or of the index's metadata of one, read without
    /// rebuilding its record), as predicates and sorts see it.
    static func value(of key: String, in source: some QueriedFields) -> FieldValue? {
        switch key {
        case "recordName": .string(source.recordID.recordName)
        case "recordID": .reference(Reference(recordID: source.recordID, action: .none))
        case "recordType": .string(source.recordType)
        case "creationDate": source.creationDate.map(FieldValue.date)
        case "modificationDate": source.modificationDate.map(FieldValue.date)
        case "recordChangeTag": source.recordChangeTag.map(FieldValue.string)
        default: source.field(key)
        }
    }
}

/// What a query reads of a record: its system fields and a field by key.
protocol QueriedFields {
    var recordID: RecordID { get }
    var recordType: String { get }
    var creationDate: Date? { get }
    var modificationDate: Date? { get }
    var recordChangeTag: String? { get }
    func field(_ key: String) -> FieldValue?
}

extension Record: QueriedFields {
    func field(_ key: String) -> FieldValue? { fields[key] }
}

extension RecordMetadata: QueriedFields {}

/// A query: record type, predicate and sort order, as `CKQuery`.
public struct Query: Sendable, Hashable {
    public var recordType: String
    public var predicate: Predicate
    public var sortDescriptors: [SortDescriptor]

    public init(recordType: String, predicate: Predicate = .truePredicate, sortDescriptors: [SortDescriptor] = []) {
        self.recordType = recordType
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }
}

/// Sort by one key, as `NSSortDescriptor`. System keys: `recordName`, `creationDate`, `modificationDate`.
public struct SortDescriptor: Sendable, Hashable {
    public var key: String
    public var ascending: Bool

    public init(key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }
}

/// Where a query stopped, to continue with the next page, as `CKQueryOperation.Cursor`.
public struct QueryCursor: Sendable, Hashable {
    let query: Query
    let offset: Int
}

/// One page of query results.
public struct QueryResult: Sendable {
    public var records: [Record]
    /// Non-nil when more results remain.
    public var cursor: QueryCursor?
}

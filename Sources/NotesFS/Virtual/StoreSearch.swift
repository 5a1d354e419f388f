import Notes
import RecordStore

/// A ``NoteSearching`` that keeps no index: each search reads every record into a temporary
/// full-text index, so it answers exactly as ``IndexedSearch`` and `notesfs search` do (the rules
/// of `SearchQuery`, best first), at a cost that grows with the store.
public struct StoreSearch: NoteSearching {
    let database: RecordDatabase

    public init(database: RecordDatabase) {
        self.database = database
    }

    /// - Throws: ``NotesError/refusedQuery(_:)`` (`EINVAL`) for a query `notesfs search` refuses; an index error when the
    ///   temporary index cannot be written.
    public func search(_ query: String, limit: Int) throws -> [RecordID] {
        try NotesSearchIndex(database: database).recordIDsByReading(matching: query, limit: limit, because: "no index is kept")
    }
}

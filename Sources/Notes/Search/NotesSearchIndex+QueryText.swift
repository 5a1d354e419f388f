import Index
import RecordStore

/// A search given as text, as `notesfs search` and the mount's `.search/QUERY` take it: parsed by
/// the rules of ``SearchQuery``, answered best first, as record IDs.
extension NotesSearchIndex {
    /// The records matching `text`, from the index (caught up first; see
    /// ``search(_:folder:limit:snippets:progress:)``).
    ///
    /// - Throws: ``NotesError/refusedQuery(_:)`` for a query the rules refuse; ``SQLiteError``
    ///   when neither the index nor a temporary one can answer.
    public func recordIDs(matching text: String, limit: Int?) throws -> [RecordID] {
        try search(Self.parse(text), limit: limit, snippets: false).hits.map { RecordID(recordName: $0.name) }
    }

    /// The records matching `text`, from a temporary index of every record (no index is kept).
    ///
    /// - Throws: as ``recordIDs(matching:limit:)``.
    public func recordIDsByReading(matching text: String, limit: Int?, because reason: String) throws -> [RecordID] {
        try searchByReading(Self.parse(text), limit: limit, snippets: false, because: reason).hits.map { RecordID(recordName: $0.name) }
    }

    static func parse(_ text: String) throws(NotesError) -> SearchQuery {
        do { return try SearchQuery(text) } catch { throw .refusedQuery("\(error)") }
    }
}

import Notes
import RecordStore

/// The default ``NoteSearching``: a query over the record store, good until a full-text index
/// takes over.
///
/// A note matches when its title or its text contains every whitespace-separated word of the
/// query, ignoring case and diacritics (`CONTAINS[cd]`); an attachment when its name does. Hits
/// come newest `modificationDate` first (then by record name). A note kept as bytes (not UTF-8, or
/// over 8 MiB) matches by its title only. Its cost grows with the store: every note's title and
/// text is compared (the texts the index does not hold are read from their record files).
public struct StoreSearch: NoteSearching {
    let database: RecordDatabase

    public init(database: RecordDatabase) {
        self.database = database
    }

    public func search(_ query: String, limit: Int) throws -> [RecordID] {
        let words = query.split(whereSeparator: \.isWhitespace).map { FieldValue.string(String($0)) }
        guard !words.isEmpty, limit > 0 else { return [] }
        let newestFirst = [SortDescriptor(key: "modificationDate", ascending: false), SortDescriptor(key: "recordName")]
        let notes = try Predicate(
            format: words.map { _ in "(title CONTAINS[cd] %@ OR text CONTAINS[cd] %@)" }.joined(separator: " AND "),
            argumentArray: words.flatMap { [$0, $0] })
        let attachments = try Predicate(
            format: words.map { _ in "name CONTAINS[cd] %@" }.joined(separator: " AND "), argumentArray: words)
        let hits =
            database.queryMetadata(Query(recordType: Note.recordType, predicate: notes, sortDescriptors: newestFirst)).prefix(limit)
            + database.queryMetadata(Query(recordType: Attachment.recordType, predicate: attachments, sortDescriptors: newestFirst))
            .prefix(limit)
        let ranked = hits.sorted { a, b in
            let (da, db) = (a.modificationDate ?? .distantPast, b.modificationDate ?? .distantPast)
            return da != db ? da > db : a.recordID.recordName < b.recordID.recordName
        }
        return ranked.prefix(limit).map(\.recordID)
    }
}

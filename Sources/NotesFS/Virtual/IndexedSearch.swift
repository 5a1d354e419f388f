import Foundation
import Index
import Notes
import RecordStore

/// The mount's ``NoteSearching`` over the full-text index: ranked, words, "phrases", prefix*,
/// AND/OR/NOT, case and diacritics folded.
///
/// The index follows the journal on a thread of its own (``NotesSearchIndex/startBackgroundIndexing(log:)``),
/// never on a request's path; a search catches it up with what is committed first, so a note
/// saved and searched at once is found. While the index is first built (or rebuilt after damage),
/// and for a query the index cannot parse, ``StoreSearch`` answers instead: slower, never stale.
public final class IndexedSearch: NoteSearching {
    let index: NotesSearchIndex
    let fallback: StoreSearch

    public init(database: RecordDatabase, log: @escaping @Sendable (String) -> Void) {
        index = NotesSearchIndex(database: database)
        fallback = StoreSearch(database: database)
        database.setCandidateSource(index)
        index.startBackgroundIndexing(log: log)
    }

    deinit {
        index.database.setCandidateSource(nil)
        index.stopBackgroundIndexing()
    }

    public func search(_ query: String, limit: Int) throws -> [RecordID] {
        if let parsed = try? SearchQuery(query), let hits = index.searchIfReady(parsed, limit: limit) {
            return hits.map { RecordID(recordName: $0.name) }
        }
        return try fallback.search(query, limit: limit)
    }
}

import FUSE
import Foundation
import Notes
import RecordStore

/// The mount's ``NoteSearching`` over the full-text index: the rules of `notesfs search`
/// (`SearchQuery`), every match, best first.
///
/// The index follows the journal on a thread of its own (``NotesSearchIndex/startBackgroundIndexing(log:)``);
/// a search catches it up with what is committed first, so a note saved and searched at once is
/// found. While the index is first built (or rebuilt after damage), a search waits for the build:
/// the answer is the index's, never another matching's. When the index cannot be written, the
/// records are read into a temporary index (the same rules).
public final class IndexedSearch: NoteSearching {
    let index: NotesSearchIndex
    public var notesIndex: NotesSearchIndex? { index }

    public init(database: RecordDatabase, log: @escaping @Sendable (String) -> Void) {
        index = NotesSearchIndex(database: database)
        database.setCandidateSource(index)
        index.startBackgroundIndexing(log: log)
    }

    deinit {
        index.database.setCandidateSource(nil)
        index.stopBackgroundIndexing()
    }

    /// - Throws: ``NotesError/refusedQuery(_:)`` (`EINVAL`) for a query `notesfs search` refuses
    ///   (empty, no words, too long, unbalanced); an index error when neither the index nor a
    ///   temporary one can answer.
    public func search(_ query: String, limit: Int) throws -> [RecordID] {
        try index.recordIDs(matching: query, limit: limit)
    }
}

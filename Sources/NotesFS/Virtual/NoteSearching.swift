import Notes
import RecordStore

/// The search behind the mount's `.search/QUERY` directories.
///
/// The mount receives one at construction (``NotesFileSystem/Options/search``): by default
/// ``IndexedSearch`` (the full-text index); ``StoreSearch`` answers the same without keeping one.
public protocol NoteSearching: Sendable {
    /// The notes and attachments matching `query` (as the user typed it, any UTF-8), best first,
    /// at most `limit` of them. Called without any of the mount's locks held, on a request thread.
    /// - Throws: whatever keeps it from answering (the request that asked gets `EIO`, or the
    ///   errno ``ErrnoMapping`` gives a store error).
    func search(_ query: String, limit: Int) throws -> [RecordID]

    /// The index that knows the links (rename rewrites, `.backlinks`, `.tags`); nil: none, and
    /// renames rewrite no link.
    var notesIndex: NotesSearchIndex? { get }
}

extension NoteSearching {
    public var notesIndex: NotesSearchIndex? { nil }
}

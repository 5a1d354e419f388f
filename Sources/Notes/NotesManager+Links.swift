import Foundation
import Index
import RecordStore

/// Links, backlinks, tags and property queries, as the index answers them caught up with every
/// commit (``NotesSearchIndex/readCurrent(_:)``).
extension NotesManager {
    /// The links written in `note`, in text order, each with the path it resolves to (nil: broken);
    /// none for a note no folder shows.
    /// - Throws: ``NotesError/search(_:)`` when the index cannot be read.
    public func links(of note: Note) async throws(NotesError) -> [OutgoingLink] {
        guard let path = FolderContents(database: database).path(of: note.recordID) else { return [] }
        return try readIndex { (index) throws(SQLiteError) in try NotesSearchIndex.links(ofNoteAt: path, in: index) ?? [] }
    }

    /// The links into `note` from every note, in path and line order; none for a note no folder shows.
    /// - Throws: ``NotesError/search(_:)`` when the index cannot be read.
    public func backlinks(of note: Note) async throws(NotesError) -> [Backlink] {
        guard let path = FolderContents(database: database).path(of: note.recordID) else { return [] }
        return try readIndex { (index) throws(SQLiteError) in try NotesSearchIndex.backlinks(of: path, in: index) }
    }

    /// The notes tagged `tag` (`#tag` in the text or in front matter's `tags:`; case-insensitive; a
    /// leading `#` ignored), not those with only a tag nested under it (`tag/…`), in path order.
    /// - Throws: ``NotesError/search(_:)`` when the index cannot be read; ``NotesError/store(_:)``.
    public func notes(tagged tag: String) async throws(NotesError) -> [Note] {
        let name = tag.hasPrefix("#") ? String(tag.dropFirst()) : tag
        let tagged = try readIndex { (index) throws(SQLiteError) in try index.documents(tagged: name, nested: false) }
        let ids = tagged.map { RecordID(recordName: $0.name) }
        let records = database.records(for: ids)
        return ids.compactMap { id in
            guard case .success(let record)? = records[id], record.recordType == Note.recordType else { return nil }
            return try? Note(record: record)
        }
    }

    /// The notes matching `predicate` by the rules of `notesfs query` (``NoteQuery``: a key that is
    /// no field of a note's record is its front-matter property), sorted by `sortDescriptors`
    /// (by record name when none).
    /// - Throws: ``NotesError/store(_:)`` when the store cannot answer.
    public func notes(where predicate: RecordStore.Predicate, sortedBy sortDescriptors: [RecordStore.SortDescriptor] = [])
        async throws(NotesError) -> [Note]
    {
        let query = Query(
            recordType: Note.recordType, predicate: predicate,
            sortDescriptors: sortDescriptors.isEmpty ? [RecordStore.SortDescriptor(key: "recordName")] : sortDescriptors)
        var notes: [Note] = []
        for record in try NoteQuery.records(query, in: database, index: NotesSearchIndex(database: database)) {
            notes.append(try Note(record: record))
        }
        return notes
    }

    private func readIndex<T>(_ body: (TextIndex) throws(SQLiteError) -> T) throws(NotesError) -> T {
        do { return try NotesSearchIndex(database: database).readCurrent(body) } catch { throw .search(error.description) }
    }
}

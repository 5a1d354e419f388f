import Notes
import RecordStore

/// `.query`: every name below it is a directory, `.query/PREDICATE`, holding symlinks to the notes
/// that match PREDICATE by the rules of `notesfs query` (``NoteQuery``: record fields, and
/// front-matter properties by any other key), in record name order: `ls '.query/status == "active"'`.
/// A predicate that does not parse is `EINVAL`. Answered by the index caught up first (the
/// freshness rule of `.search`). `.query` itself lists nothing: the predicates are not remembered.
struct QueryResults: VirtualTree {
    var name: String { ".query" }

    func isDirectory(_ path: [String]) -> Bool { path.count <= 1 }

    func entries(in path: [String], _ context: VirtualContext) throws -> [VirtualEntry] {
        guard path.count == 1 else { return [] }
        return try NoteQuery.recordIDs(matching: path[0], in: context.database, index: context.search.notesIndex).map { .link($0) }
    }
}

import RecordStore

/// `.search`: every name below it is a directory, `.search/QUERY`, holding symlinks to every note
/// and attachment ``NoteSearching`` finds for QUERY (the rules of `notesfs search`), best first:
/// as `grep -l` would, with no cap. A query `notesfs search` refuses is `EINVAL`.
/// `.search` itself lists nothing: the queries are not remembered.
struct SearchResults: VirtualTree {
    var name: String { ".search" }

    func isDirectory(_ path: [String]) -> Bool { path.count <= 1 }

    func entries(in path: [String], _ context: VirtualContext) throws -> [VirtualEntry] {
        guard path.count == 1 else { return [] }
        return try context.search.search(path[0], limit: Int(Int32.max)).map { .link($0) }
    }
}

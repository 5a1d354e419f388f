import RecordStore

/// `.search`: every name below it is a directory, `.search/QUERY`, holding symlinks to the notes
/// and attachments ``NoteSearching`` finds for QUERY, best first (at most ``limit``).
/// `.search` itself lists nothing: the queries are not remembered.
struct SearchResults: VirtualTree {
    static let limit = 200

    var name: String { ".search" }

    func isDirectory(_ path: [String]) -> Bool { path.count <= 1 }

    func entries(in path: [String], _ context: VirtualContext) throws -> [VirtualEntry] {
        guard path.count == 1 else { return [] }
        return try context.search.search(path[0], limit: Self.limit).map { .link($0) }
    }
}

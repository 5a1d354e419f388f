import Notes
import RecordStore

/// `.backlinks`: every path below it is a directory, `.backlinks/Work/Plan.md`, holding symlinks
/// to the notes whose links resolve to the file at that path (`notesfs backlinks`), in path order.
/// Answered by the index caught up first (the freshness rule of `.search`); a path that names no
/// file holds nothing. `.backlinks` itself lists nothing.
struct Backlinks: VirtualTree {
    var name: String { ".backlinks" }

    func isDirectory(_ path: [String]) -> Bool { true }

    func entries(in path: [String], _ context: VirtualContext) throws -> [VirtualEntry] {
        guard !path.isEmpty, let index = context.search.notesIndex else { return [] }
        let target = path.joined(separator: "/")
        var seen = Set<String>()
        return try index.backlinks(of: target).filter { seen.insert($0.sourceName).inserted }.map {
            VirtualEntry.link(RecordID(recordName: $0.sourceName))
        }
    }
}

/// `.tags`: the tags as directories (`#project/alpha` is `.tags/project/alpha`), each holding a
/// directory for every tag nested under it and symlinks to the notes that have that very tag.
/// Tags compare without case; a directory is named with the tag's most common spelling, and found
/// by any spelling (`.tags/Project` when `project` is listed). A name no tag has is `ENOENT`, so
/// that `mv .tags/old .tags/new` renames the tag rather than moving it into `new`
/// (NotesFileSystem+TagRename.swift). A tag is named only to a caller who may find one of the
/// notes that have it (or a tag under it). Answered by the index caught up first, as `.search`.
struct Tags: VirtualTree {
    var name: String { ".tags" }

    func isDirectory(_ path: [String]) -> Bool { false }

    var foldsCase: Bool { true }

    func entries(in path: [String], _ context: VirtualContext) throws -> [VirtualEntry] {
        guard let index = context.search.notesIndex else { return [] }
        let (children, tagged) = try index.tags(listing: path.isEmpty ? nil : path.joined(separator: "/"))
        // A tag's name tells of the notes that have it: named only to a caller who may find one.
        return children.map { VirtualEntry.directory($0.name, access: .anyRecord($0.notes.map { RecordID(recordName: $0) })) }
            + tagged.map { .link(RecordID(recordName: $0.name)) }
    }
}

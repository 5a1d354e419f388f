import Notes
import RecordStore

/// `.recent`: the 50 most recently modified notes, newest first (the order of the notes layer's
/// `fetchNotes`: newest `modificationDate` first), as symlinks to them.
struct RecentNotes: VirtualTree {
    static let count = 50

    var name: String { ".recent" }

    func isDirectory(_ path: [String]) -> Bool { path.isEmpty }

    func entries(in path: [String], _ context: VirtualContext) throws -> [VirtualEntry] {
        guard path.isEmpty else { return [] }
        let newestFirst = Query(
            recordType: Note.recordType,
            sortDescriptors: [SortDescriptor(key: "modificationDate", ascending: false), SortDescriptor(key: "recordName")])
        return context.database.queryMetadata(newestFirst).prefix(Self.count).map { .link($0.recordID) }
    }
}

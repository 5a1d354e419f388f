import RecordStore

/// A read-only tree of directories and symlinks that the mount shows at its root (`.recent`,
/// `.search`; `.history` later): found by lookup (`cd .search`, `ls .recent`) but never listed by
/// the root's readdir, and refused every change with `EROFS`.
///
/// A tree only says what its directories hold; the mount (`NotesFileSystem+Virtual.swift`) does
/// the rest in one place for every tree: inode numbers and lookup counts (``VirtualNodeTable``),
/// naming the links as the records' files are named and making their relative targets
/// (``VirtualLinkNames``), attributes, readdir snapshots, freshness and `EROFS`.
///
/// A directory is named by its `path`: the names below the tree's own directory (`[]` is that
/// directory, `["milk bread"]` is `.search/milk bread`).
protocol VirtualTree: Sendable {
    /// The tree's directory name at the root (`.search`).
    var name: String { get }

    /// Whether `path` names a directory of this tree. Asked for a name `entries(in:)` of its
    /// parent does not list (`.search/ANY QUERY` is a directory without being listed); keep it
    /// cheap (no store access).
    func isDirectory(_ path: [String]) -> Bool

    /// What directory `path` holds, in the order it is listed (links best first). Runs without
    /// the mount's state lock (it may search a large store); the mount caches the answer until
    /// the store changes (its change token moves).
    /// - Throws: the store's or the search's error (the request gets its errno).
    func entries(in path: [String], _ context: VirtualContext) throws -> [VirtualEntry]
}

/// One entry a virtual directory holds.
enum VirtualEntry: Sendable, Hashable {
    /// A subdirectory (another path of the same tree).
    case directory(String)
    /// A symlink to a note or attachment, named as the record's file in the mount (with its
    /// folder's path when two links would share a name) and pointing at it by a relative path
    /// (`../../Folder/Note.md` from `.search/QUERY/`). A record the mount does not show (hidden
    /// by an editor's rename, say) is left out.
    case link(RecordID)
}

/// What a tree may use to answer.
struct VirtualContext: Sendable {
    let database: RecordDatabase
    let search: any NoteSearching
}

/// Why a virtual tree refuses a request (mapped to errno by ``ErrnoMapping``).
enum VirtualTreeError: Error {
    /// A change in a read-only virtual tree.
    case readOnly
}

import Foundation
import Notes
import RecordStore

/// A read-only tree of directories, symlinks and regular files that the mount shows at its root
/// (`.recent`, `.search`, `.history`): found by lookup (`cd .search`, `ls .recent`) but never listed by
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

    /// Whether a lookup of a name its directory does not list finds a listed directory whose
    /// name differs only in case (`.tags/Project` when `project` is listed). False by default.
    var foldsCase: Bool { get }

    /// What directory `path` holds, in the order it is listed (links best first). Runs without
    /// the mount's state lock (it may search a large store); the mount caches the answer until
    /// the store changes (its change token moves).
    /// - Throws: the store's or the search's error (the request gets its errno).
    func entries(in path: [String], _ context: VirtualContext) throws -> [VirtualEntry]

    /// The bytes of `file`, one of this tree's ``VirtualEntry/file(_:)`` entries (read when it is
    /// opened, outside the mount's state lock). Trees without files keep the default, which
    /// throws ``VirtualTreeError/noFile``.
    /// - Throws: ``VirtualTreeError/noFile`` when its source is gone; the store's error.
    func contents(of file: VirtualFile, _ context: VirtualContext) throws -> VirtualFileContents
}

extension VirtualTree {
    var foldsCase: Bool { false }

    func contents(of file: VirtualFile, _ context: VirtualContext) throws -> VirtualFileContents {
        throw VirtualTreeError.noFile
    }
}

/// Whose access a virtual entry gives: the mount shows it with that record's owner, group and
/// permission bits, and names it only to a caller who could reach that record by walking the
/// folders (``NotesFileSystem/mayFind(_:_:_:)``): a private note's versions, search hits and recency
/// are as private as the note.
enum VirtualAccess: Sendable, Hashable {
    /// The tree's own directories (`.search/QUERY`, `.history/Recovered`): open to every caller.
    case tree
    /// A live record's: a note or attachment (its read access) or a folder.
    case record(RecordID)
    /// The real directory at this path below the root (`.history/Work` is as open as `Work`).
    case realPath([String])
    /// A deleted note's: the ownership its last version kept (nil: none kept, only the mount's
    /// owner may read it), in the folder it was in while that is still there (`folderGone`: it
    /// was in a folder that is gone too, whose access can no longer be known).
    case deleted(Ownership?, folder: RecordID?, folderGone: Bool)
    /// A tree's own directory whose name tells of these records (a tag of `.tags`: the notes that
    /// have it or a tag under it): named only to a caller who may find one of them; its
    /// attributes are the tree's.
    case anyRecord([RecordID])
}

/// One entry a virtual directory holds.
enum VirtualEntry: Sendable, Hashable {
    /// A subdirectory (another path of the same tree), with the access it gives.
    case directory(String, access: VirtualAccess = .tree)
    /// A symlink to a note or attachment, named as the record's file in the mount (with its
    /// folder's path when two links would share a name) and pointing at it by a relative path
    /// (`../../Folder/Note.md` from `.search/QUERY/`). A record the mount does not show (hidden
    /// by an editor's rename, say) is left out.
    case link(RecordID)
    /// A read-only regular file whose bytes the tree gives by ``VirtualTree/contents(of:_:)``.
    case file(VirtualFile)
}

/// A regular file of a virtual tree: its name, attributes and where its bytes come from.
struct VirtualFile: Sendable, Hashable {
    var name: String
    /// Its size in bytes (what `stat` shows; a read never goes past it).
    var size: Int64
    /// Its `st_mtime` (and `st_ctime`, `st_atime`).
    var modificationDate: Date
    /// The record the tree reads its bytes from (a `Version`, for `.history`).
    var source: RecordID
    /// Whose access it gives (a version's: its note's).
    var access: VirtualAccess = .tree
}

/// The bytes of a virtual file as its tree gives them.
enum VirtualFileContents: Sendable {
    /// Held in memory (a text, at most `Note.maxInlineTextBytes`).
    case bytes([UInt8])
    /// An asset file of the store, read with `pread`.
    case asset(Asset)
}

/// What a tree may use to answer.
struct VirtualContext: Sendable {
    let database: RecordDatabase
    let search: any NoteSearching
    /// Where notes, attachments or folders show in the mount (each one's folders' names from the
    /// root down, then its own, as listed; nil for one it does not show), in the order given.
    /// Takes the mount's state lock once.
    let mountPaths: @Sendable ([RecordMetadata]) -> [[String]?]
    /// What the mount's names and the store's records were made from: equal generations see the
    /// same answers (a tree may keep what it derived from them until it moves).
    let generation: VirtualNodeTable.CacheKey
}

/// Why a virtual tree refuses a request (mapped to errno by ``ErrnoMapping``).
enum VirtualTreeError: Error {
    /// A change in a read-only virtual tree.
    case readOnly
    /// A virtual file whose bytes are gone (its version was pruned), or a tree without files.
    case noFile
}

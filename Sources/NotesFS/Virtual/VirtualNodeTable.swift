import FUSE
import Glibc

/// The inodes of the virtual trees' directories, links and files, with the kernel's lookup counts.
///
/// Numbers come from 2^56 up, far above record identities and scratch files (2^48 up), and are
/// never reused. A node is known by its directory and name: looking a name up again gives the
/// same inode while the kernel holds it. Each tree's own directory is made first and kept for
/// the mount's life; every other node lives while the kernel holds a lookup reference to it
/// (``countLookup(_:)``, ``forget(_:lookups:)``). Nodes that readdir numbered without a reference
/// (plain `readdir` hands out inode numbers only) are dropped when their directory is listed
/// again or forgotten, so the table holds at most one listing's worth of them per directory.
/// Guarded by the filesystem's state lock (a member of ``FileSystemState``).
struct VirtualNodeTable {
    static let firstInode: Inode = 1 << 56

    struct Node {
        enum Kind: Equatable {
            /// A directory of tree number `tree` (its index in ``NotesFileSystem/virtualTrees``).
            case directory(tree: Int, path: [String])
            case link
            /// A regular file (``VirtualEntry/file(_:)``).
            case file
        }
        var parent: Inode
        var name: String
        var kind: Kind
        var lookups: UInt64 = 0
        /// A tree's own directory: never freed.
        var isPinned = false

        var isDirectory: Bool {
            if case .directory = kind { return true }
            return false
        }
    }

    private struct Key: Hashable {
        var parent: Inode
        var name: String
    }

    private(set) var nodes: [Inode: Node] = [:]
    /// What a cached listing was made from.
    struct CacheKey: Equatable, Sendable {
        /// ``FileSystemState/appliedChanges``: the store changes the listings had taken in.
        var appliedChanges: UInt64
        /// How many records editors' renames hid (``FileSystemState/detached``): their names
        /// come and go without a store change.
        var hidden: Int
    }

    /// A virtual directory's tree's answer, and what each of the last few callers was shown of it
    /// (the names depend on which entries are there: a hit shares its name with another only if
    /// the caller sees both).
    struct CachedListing {
        var key: CacheKey
        var entries: [VirtualEntry]
        /// What the last callers (identities: uid, gid and, when a decision read them, groups)
        /// were shown, oldest first, at most ``maximumCallers``: a lookup or `stat` of each entry
        /// answers from here instead of deciding every entry again (an `ls -l` of N hits made N²
        /// decisions). The decisions hold while `key` does: every change that can move one (a
        /// mode, owner or group, an ACL, a move of a note or of a folder above it, a delete) is a
        /// commit, which moves ``CacheKey/appliedChanges``; what rests on anything else is
        /// ``Shown/unsettled`` and decided again at every use. Guarded by the state lock, as the
        /// whole table.
        private(set) var shown: [Shown] = []

        /// How many callers' answers a listing keeps (a few users, or one user's processes in
        /// different groups, list the same directory; more only costs deciding again).
        static let maximumCallers = 4

        init(key: CacheKey, entries: [VirtualEntry]) {
            self.key = key
            self.entries = entries
        }

        /// Keeps `answer`, in place of one for the same caller identity, dropping the oldest
        /// beyond ``maximumCallers``.
        mutating func remember(_ answer: Shown) {
            shown.removeAll { $0.uid == answer.uid && $0.gid == answer.gid && $0.groups == answer.groups }
            shown.append(answer)
            if shown.count > Self.maximumCallers { shown.removeFirst(shown.count - Self.maximumCallers) }
        }
    }

    /// Which entries of a ``CachedListing`` one caller identity may be told of, and what it is shown.
    struct Shown {
        var uid: uid_t
        var gid: gid_t
        /// The caller's supplementary groups (sorted) when a decision read them; nil when none
        /// did: then every caller with this uid and gid decides alike, whatever its groups.
        var groups: [gid_t]?
        /// Whether the caller may be told of each entry (one per entry of the listing).
        var visible: [Bool]
        /// The entries whose decision rests on more than the records (``NotesFileSystem/Decision``):
        /// decided again at every use, and the answer made again if one differs.
        var unsettled: [Int]
        var items: NotesFileSystem.VirtualListing
    }

    /// What each directory held when last asked (the tree's answer holds until the next store
    /// change is applied); dropped with the directory.
    private(set) var listings: [Inode: CachedListing] = [:]
    /// How many times a listing asked whether a caller may be told of an entry
    /// (``NotesFileSystem/mayFind(_:_:_:)``): a count for tests, which hold listings to a cost
    /// linear in their size (a `stat` of each entry must not decide every entry again).
    var permissionDecisions = 0
    private var byName: [Key: Inode] = [:]
    /// The nodes below each directory that has any.
    private var children: [Inode: Set<Inode>] = [:]
    private var next = firstInode

    /// Whether `inode` is in the range this table numbers from (a cheap test before the lock).
    static func isVirtual(_ inode: Inode) -> Bool { inode >= firstInode }

    /// The inode of `name` in `parent`, made with `kind` if the table has none (or has one of
    /// another kind, which is dropped from the names: the kernel's references to it stay valid).
    mutating func inode(parent: Inode, name: String, kind: Node.Kind, pinned: Bool = false) -> Inode {
        let key = Key(parent: parent, name: name)
        if let inode = byName[key], nodes[inode]?.kind == kind { return inode }
        let inode = next
        next += 1
        nodes[inode] = Node(parent: parent, name: name, kind: kind, isPinned: pinned)
        byName[key] = inode
        children[parent, default: []].insert(inode)
        return inode
    }

    /// Keeps what directory `inode` holds (nothing when it was freed meanwhile).
    mutating func setListing(of inode: Inode, _ listing: CachedListing) {
        guard nodes[inode] != nil else { return }
        listings[inode] = listing
    }

    /// One more lookup reference the kernel holds (an entry reply reached it).
    mutating func countLookup(_ inode: Inode) {
        nodes[inode]?.lookups += 1
    }

    /// The kernel gave back `lookups` references: a node with none left (and no nodes below it
    /// that the kernel holds) is freed, with the unreferenced nodes below it.
    mutating func forget(_ inode: Inode, lookups: UInt64) {
        guard var node = nodes[inode] else { return }
        node.lookups -= min(node.lookups, lookups)
        nodes[inode] = node
        free(inode)
    }

    /// Drops the nodes below `directory` that the kernel holds no reference to (before it is
    /// listed again: readdir numbers its entries afresh).
    mutating func dropUnreferencedChildren(of directory: Inode) {
        for inode in children[directory] ?? [] {
            guard let node = nodes[inode], node.lookups == 0, !node.isPinned else { continue }
            dropUnreferencedChildren(of: inode)
            if children[inode] == nil { remove(inode) }
        }
    }

    private mutating func free(_ inode: Inode) {
        guard let node = nodes[inode], node.lookups == 0, !node.isPinned else { return }
        dropUnreferencedChildren(of: inode)
        guard children[inode] == nil else { return }  // the kernel holds a node below it
        remove(inode)
        if let parent = nodes[node.parent], parent.lookups == 0 { free(node.parent) }
    }

    private mutating func remove(_ inode: Inode) {
        guard let node = nodes.removeValue(forKey: inode) else { return }
        listings[inode] = nil
        let key = Key(parent: node.parent, name: node.name)
        if byName[key] == inode { byName[key] = nil }
        children[node.parent]?.remove(inode)
        if children[node.parent]?.isEmpty == true { children[node.parent] = nil }
    }
}

import FUSE
import Foundation
import Notes
import RecordStore

/// Who may see what in the virtual trees (`.search`, `.recent`, `.history`).
///
/// Every virtual entry stands for a record (``VirtualAccess``) and gives exactly that record's
/// access: `.history/Work/` has the owner, group and mode of `Work`; a note's versions directory
/// and its version files have the note's owner and group, and read (and search) bits where the
/// note has read bits. The kernel enforces those (`default_permissions` is always on). What the
/// kernel cannot enforce is the *names* in a listing, so a listing (and a lookup) names an entry
/// only to a caller who could reach its record by walking the folders: read and search permission
/// on every directory above it, and read permission on the note itself (a search hit tells what
/// its text holds). Root (uid 0) sees everything, as it could by walking.
extension NotesFileSystem {
    /// The ownership a virtual entry shows and the real directories above its record.
    struct ResolvedAccess {
        /// Permission bits (`07777`) of the record.
        var permissions: mode_t
        var uid: uid_t
        var gid: gid_t
        /// The directories above the record, nearest first, up to the root: a caller must be able
        /// to list and search each one.
        var directories: [Attributes]
        /// The record is a folder (only the directories above it decide whether its name is seen).
        var isFolder: Bool
        /// Resolved from records alone, so that it holds until the next store change is applied;
        /// false when a real path ran through a scratch file (its mode and owner change with no
        /// commit, and so do the names it takes) or did not lead to a directory (a scratch file
        /// or a note brought back by an editor could take the name with no commit).
        var isSettled = true
    }

    /// What `access` resolves to now. A record the mount cannot find, or whose folders it cannot
    /// follow to the root, resolves to the mount owner's alone (nobody else is told of it). A
    /// record or folder with a POSIX ACL counts as its owner's alone (the ACL's other entries are
    /// not evaluated here: never more than the kernel would give), and so does a deleted note
    /// whose folder is gone with it (that folder's access cannot be known any more).
    func resolve(_ access: VirtualAccess, _ state: inout FileSystemState) -> ResolvedAccess {
        let ownerOnly = ResolvedAccess(permissions: 0o500, uid: options.uid, gid: options.gid, directories: [], isFolder: false)
        switch access {
        case .tree, .anyRecord:
            return ResolvedAccess(permissions: 0o555, uid: options.uid, gid: options.gid, directories: [], isFolder: true)
        case .record(let id):
            guard let metadata = database.metadata(for: id), let attributes = guardedAttributes(metadata.identity, state),
                let above = directories(above: metadata, &state)
            else { return ownerOnly }
            return resolved(attributes, above: above)
        case .realPath(let path):
            var unsettled = ownerOnly
            unsettled.isSettled = false
            var inode = Self.rootInode
            var above: [Attributes] = []
            for name in path {
                guard let next = try? child(inode, name, &state), let directory = guardedAttributes(inode, state) else { return unsettled }
                above.insert(directory, at: 0)
                inode = next
            }
            guard let attributes = guardedAttributes(inode, state) else { return unsettled }
            var access = resolved(attributes, above: above)
            access.isSettled = state.scratchFiles.files[inode] == nil  // only the last can be one: a file
            return access
        case .deleted(let ownership, let folder, let folderGone):
            var above: [Attributes]
            if let folder {
                guard let metadata = database.metadata(for: folder), let attributes = guardedAttributes(metadata.identity, state),
                    let rest = directories(above: metadata, &state)
                else { return ownerOnly }
                above = [attributes] + rest
            } else {
                guard let root = guardedAttributes(Self.rootInode, state) else { return ownerOnly }
                above = [root]
            }
            guard let ownership else {
                return ResolvedAccess(permissions: 0o400, uid: options.uid, gid: options.gid, directories: above, isFolder: false)
            }
            let permissions = mode_t(ownership.mode & 0o7777) & (folderGone ? 0o7700 : 0o7777)
            return ResolvedAccess(permissions: permissions, uid: ownership.uid, gid: ownership.gid, directories: above, isFolder: false)
        }
    }

    private func resolved(_ attributes: Attributes, above: [Attributes]) -> ResolvedAccess {
        ResolvedAccess(
            permissions: attributes.mode & 0o7777, uid: attributes.uid, gid: attributes.gid, directories: above,
            isFolder: attributes.isDirectory)
    }

    /// `inode`'s attributes, its mode cut to the owner's bits when its record has a POSIX ACL.
    private func guardedAttributes(_ inode: Inode, _ state: borrowing FileSystemState) -> Attributes? {
        guard var attributes = try? attributes(inode, state) else { return nil }
        if let metadata = database.metadata(identity: inode),
            metadata.isLarge(ExtendedAttributes.fieldKey)
                || metadata.field(ExtendedAttributes.fieldKey) != nil,
            (try? storedAttributes(of: metadata))?[AccessControlList.accessName] != nil
        {
            attributes.mode &= ~mode_t(0o077)
        }
        return attributes
    }

    /// The attributes of the directories above `metadata`'s record, nearest first, up to the root
    /// (``guardedAttributes(_:_:)``); nil when the chain cannot be followed to the root.
    private func directories(above metadata: RecordMetadata, _ state: inout FileSystemState) -> [Attributes]? {
        guard let chain = directoryChain(above: metadata, &state) else { return nil }
        var result: [Attributes] = []
        for directory in chain {
            guard let attributes = guardedAttributes(directory, state) else { return nil }
            result.append(attributes)
        }
        return result
    }

    /// Whether a caller may be told of an entry, and whether that holds until the next store
    /// change is applied (``ResolvedAccess/isSettled``).
    struct Decision {
        var may: Bool
        var isSettled: Bool
    }

    /// Whether `caller` may be told of an entry that gives `access`: ``mayFind(_:_:)`` of its
    /// record, or of any one of them for ``VirtualAccess/anyRecord(_:)``.
    func mayFind(_ access: VirtualAccess, _ caller: inout Caller, _ state: inout FileSystemState) -> Decision {
        guard case .anyRecord(let ids) = access else {
            let resolved = resolve(access, &state)
            return Decision(may: mayFind(resolved, &caller), isSettled: resolved.isSettled)
        }
        return Decision(may: ids.contains { mayFind(resolve(.record($0), &state), &caller) }, isSettled: true)
    }

    /// Whether `caller` may be told of an entry whose record has `access`: it may list and search
    /// every directory above the record, and read the record unless it is a folder.
    func mayFind(_ access: ResolvedAccess, _ caller: inout Caller) -> Bool {
        for directory in access.directories
        where !caller.may(S_IROTH | S_IXOTH, permissions: directory.mode, uid: directory.uid, gid: directory.gid) {
            return false
        }
        return access.isFolder || caller.may(S_IROTH, permissions: access.permissions, uid: access.uid, gid: access.gid)
    }

    /// The mode a virtual directory or file standing for `access` shows: a folder's own bits less
    /// write; a note's read bits on a file, and read with search on a directory (its versions).
    static func virtualMode(_ access: ResolvedAccess, directory: Bool) -> mode_t {
        if access.isFolder { return S_IFDIR | (access.permissions & 0o7555) }
        let read = access.permissions & 0o444
        return directory ? S_IFDIR | read | (read >> 2) : S_IFREG | read
    }
}

/// The process a request came from, as permission checks see it: its uid, its gid and (read on
/// first need, from `/proc`) its supplementary groups.
struct Caller {
    let uid: uid_t
    let gid: gid_t
    private let pid: pid_t
    private var groups: [gid_t]?
    /// Whether a decision (``may(_:permissions:uid:gid:)``) looked at the supplementary groups:
    /// when none did, another process with this uid and gid would have been answered alike.
    private(set) var decidedByGroups = false

    init(_ context: RequestContext) {
        (uid, gid, pid) = (context.uid, context.gid, context.pid)
    }

    /// Whether the permission bits `permissions` of an entry owned by `uid`:`gid` grant every bit
    /// of `want` (given as the "other" bits, `S_IROTH | S_IXOTH`) to this caller, as the kernel
    /// decides without ACLs: the owner's bits for the owner, else the group's for a member, else
    /// the others'. Root is granted everything.
    mutating func may(_ want: mode_t, permissions: mode_t, uid owner: uid_t, gid group: gid_t) -> Bool {
        if uid == 0 { return true }
        let shift: mode_t = uid == owner ? 6 : isMember(of: group) ? 3 : 0
        return (permissions >> shift) & want == want
    }

    private mutating func isMember(of group: gid_t) -> Bool {
        if gid == group { return true }
        decidedByGroups = true
        return supplementaryGroups().contains(group)
    }

    /// Its supplementary groups, sorted (read from `/proc` on first need).
    mutating func supplementaryGroups() -> [gid_t] {
        if let groups { return groups }
        let list = RequestContext.supplementaryGroups(of: pid).sorted()
        groups = list
        return list
    }

    /// Whether an answer kept for callers of uid `uid`, gid `gid` and supplementary groups
    /// `groups` (nil: the answer did not depend on them) is this caller's too.
    mutating func isAnswered(like uid: uid_t, _ gid: gid_t, groups: [gid_t]?) -> Bool {
        guard uid == self.uid, gid == self.gid else { return false }
        guard let groups else { return true }
        return groups == supplementaryGroups()
    }
}

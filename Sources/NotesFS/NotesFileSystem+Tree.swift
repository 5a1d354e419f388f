import FUSE
import Foundation
import Notes
import RecordStore

/// Directory listings: built from the store on first use, then updated from store changes.
extension NotesFileSystem {
    static let rootInode: Inode = 1
    /// The virtual, read-only `Recovered` directory at the root (``FolderTree``): folders whose
    /// parent chain is a cycle or dangles, and notes and attachments whose folder is missing.
    /// Below the scratch inodes (2^48 up); record identities never come near.
    static let recoveredInode: Inode = (1 << 48) - 1

    /// The folder hierarchy, computed once and again after changes to folders.
    func folderTree(_ state: inout FileSystemState) -> FolderTree {
        if let tree = state.names.folderTree { return tree }
        let tree = FolderTree(database: database)
        state.names.folderTree = tree
        return tree
    }

    /// Recomputes the folder tree after a change to folders. `rebuild`: what `Recovered` holds
    /// changed (then every listing is rebuilt, as after a reset); `moved`: a folder was added,
    /// deleted or moved (a save that keeps its parent, as when a note's save touches its folder's
    /// times, leaves the hierarchy as it is).
    private func refreshFolderTree(after change: RecordStoreChange, _ state: inout FileSystemState) -> (rebuild: Bool, moved: Bool) {
        // A folder saved with the same parent (its times moved, or its name) keeps the tree as it is.
        let moved = change.saved.contains { metadata in
            guard metadata.recordType == Folder.recordType else { return false }
            let parent = metadata.field(FieldName.parent)?.referenceValue?.recordID
            switch state.names.folderTree?.placement(ofFolder: metadata.recordID) {
            case .root?: return parent != nil
            case .folder(let id)?: return parent != id
            default: return true
            }
        }
        let deletedFolders = change.deleted.filter { $0.recordType == Folder.recordType }.map(\.recordID)
        guard moved || !deletedFolders.isEmpty else { return (false, false) }
        if var tree = state.names.folderTree, tree.update(saving: change.saved, deleting: deletedFolders) {
            state.names.folderTree = tree  // no recovered folder before or after
            return (false, true)
        }
        let old = state.names.folderTree
        let new = FolderTree(database: database)
        state.names.folderTree = new
        return (old.map { $0.recovered != new.recovered } ?? false, true)
    }

    /// Applies queued store changes to the listings and queues the kernel notifications they need.
    func applyPendingChanges(_ state: inout FileSystemState) {
        let changes = pendingChanges.withLock { pending in
            defer { pending = [] }
            return pending
        }
        guard !changes.isEmpty else { return }
        state.appliedChanges &+= UInt64(changes.count)
        var out: [Invalidation] = []
        for change in changes {
            var movedIdentities = Set<Inode>()
            let folders = refreshFolderTree(after: change, &state)
            if folders.rebuild || change.isReset {
                for (directory, listing) in state.names.listings {
                    for (inode, name) in listing.nameOf where state.scratchFiles.files[inode] == nil {
                        out.append(.entry(parent: directory, name: name))
                        out.append(.inode(inode))
                    }
                }
                state.names.listings = [:]
                state.names.folderTree = nil
                state.names.parentOf = state.names.parentOf.filter { state.scratchFiles.files[$0.key] != nil }
                state.pageCache.inodeCaches.removeAllTags()
                continue
            }
            let recovered = folders.moved || touchesRecovered(change, &state)
            for metadata in change.deleted {
                let inode = metadata.identity
                // Taken over by a saved record (rename over an existing file): the save below moves it.
                if change.saved.contains(where: { $0.identity == inode }) {
                    movedIdentities.insert(inode)
                    continue
                }
                if let parent = state.names.parentOf.removeValue(forKey: inode) {
                    for rename in state.names.listings[parent]?.remove(inode) ?? [] {
                        guard let old = rename.old else { continue }
                        if rename.inode != inode {
                            out.append(.entry(parent: parent, name: old))  // a collision suffix changed
                        } else if change.isExternal {
                            out.append(.delete(parent: parent, child: inode, name: old))  // the kernel did not do it
                        }
                    }
                }
                state.names.listings[inode] = nil
                if metadata.recordType == Folder.recordType, state.directories.open.values.contains(inode) {
                    state.directories.removed[inode] = removedDirectoryAttributes(inode, metadata, state)
                }
                state.files.open[inode]?.orphaned = true
                state.pageCache.inodeCaches.remove(inode)
            }
            for metadata in change.saved {
                let inode = metadata.identity
                guard let parent = parentInode(of: metadata, &state), let member = member(for: metadata) else { continue }
                if state.names.detached.values.contains(where: { $0.values.contains(inode) }) { continue }
                if movedIdentities.contains(inode) {
                    dropReplacedInode(of: metadata, in: parent, external: change.isExternal, &out, &state)
                }
                let oldParent = state.names.parentOf[inode]
                // The kernel knows about names this mount changed itself; it must hear of collision
                // suffixes that moved and of everything another process did.
                if let oldParent, oldParent != parent {
                    for rename in state.names.listings[oldParent]?.remove(inode) ?? [] {
                        if let old = rename.old, change.isExternal || rename.inode != inode {
                            out.append(.entry(parent: oldParent, name: old))
                        }
                    }
                }
                if let renames = state.names.listings[parent]?.upsert(inode, member) {
                    for rename in renames {
                        if let old = rename.old, change.isExternal || rename.inode != inode {
                            out.append(.entry(parent: parent, name: old))
                        }
                    }
                    state.names.parentOf[inode] = parent
                } else {
                    state.names.parentOf[inode] = nil
                }
                if change.isExternal {
                    out.append(.inode(inode))
                    refreshCleanBuffer(inode, tag: metadata.recordChangeTag, &state)
                }
            }
            if recovered { refreshRecovered(foldersChanged: folders.moved, &out, &state) }
            #if DEBUG
                // A listing that kept a record its change moved away (seen in a sync test: a listing
                // built ahead of the change, which `listing(_:_:)` now settles): said at the change
                // that left it, in the mount's log, which the sync tests print (`expectEverywhere`).
                let touched = change.saved.map(\.identity) + change.deleted.map(\.identity)
                for problem in state.names.listingViolations(of: touched) {
                    Log.error("listings after change \(change.token) (external: \(change.isExternal)): \(problem)")
                }
            #endif
        }
        if !out.isEmpty {
            notifyKernel(out)
        }
    }

    /// After the record behind `inode` took bytes that did not come from its open buffer (another
    /// process's save, a scratch file renamed over it): a clean buffer (a writer that has not
    /// written since its last save, or whose release the kernel has not sent yet) takes the
    /// record's bytes, since the buffer stands for the file (`stat` sizes, reads) while it is
    /// open. A dirty buffer keeps its bytes: its save then fails with `ESTALE` and keeps them.
    func refreshCleanBuffer(_ inode: Inode, tag: String?, _ state: inout FileSystemState) {
        if let open = state.files.open[inode], !open.dirty, state.scratchFiles.files[inode] == nil,
            let node = try? node(inode, state), let content = try? loadContent(node)
        {
            open.content = content
            open.baseTag = tag
        }
        state.files.readCache[inode] = nil
    }

    /// A record that took another's identity (rename over it, by another process: this mount's own
    /// rename did this already) no longer shows under its old inode: drop that from the listing.
    private func dropReplacedInode(
        of metadata: RecordMetadata, in parent: Inode, external: Bool, _ out: inout [Invalidation], _ state: inout FileSystemState
    ) {
        // This mount's own rename removed it (``replace(_:with:inode:content:parents:_:)``): no scan
        // of the folder, whose length an editor save would otherwise pay. Another process's: the
        // name is parsed once, not per member.
        guard external else { return }
        let name = DirectoryListing.CompactName(metadata.recordID.recordName)
        guard let listing = state.names.listings[parent],
            let (old, _) = listing.members.first(where: { $0.key != metadata.identity && $0.value.isRecord(name) })
        else { return }
        let oldName = listing.nameOf[old]
        _ = state.names.listings[parent]?.remove(old)
        state.names.parentOf[old] = nil
        state.files.open[old]?.orphaned = true
        state.pageCache.inodeCaches.remove(old)  // its identity is gone for good
        if let oldName { out.append(.delete(parent: parent, child: old, name: oldName)) }
    }

    /// The directory a record shows in (``FolderTree``): its folder's (or parent folder's) inode,
    /// the root, or `Recovered`. Nil for records the mount does not show.
    func parentInode(of metadata: RecordMetadata, _ state: inout FileSystemState) -> Inode? {
        guard let placement = folderTree(&state).placement(of: metadata) else { return nil }
        switch placement {
        case .root: return Self.rootInode
        case .recovered: return Self.recoveredInode
        case .folder(let id): return database.metadata(for: id)?.identity ?? Self.recoveredInode
        }
    }

    /// `Recovered` as an entry of the root (``FolderContents/recoveredCandidate``: created last).
    static let recoveredMember = DirectoryListing.Member(
        recordName: FolderTree.recoveredRecordName, recordType: Folder.recordType, title: FolderTree.recoveredName,
        created: .distantFuture)

    /// How a record appears in its directory listing: named by the rules of ``FolderContents``.
    func member(for metadata: RecordMetadata) -> DirectoryListing.Member? {
        var member = DirectoryListing.Member(
            recordName: metadata.recordID.recordName, recordType: metadata.recordType,
            title: FolderContents.storedName(of: metadata, in: database), created: FolderContents.namingDate(of: metadata))
        (member.fileType, member.linkTarget) = nodeType(of: metadata)
        return member
    }

    /// The listing of directory `inode`, built from the store if needed.
    /// - Throws: `ENOENT` when there is no such directory, `ENOTDIR` for a file.
    func listing(_ inode: Inode, _ state: inout FileSystemState) throws(Errno) -> DirectoryListing {
        if let listing = state.names.listings[inode] { return listing }
        let hidden = Set(state.names.detached[inode]?.values.map { $0 } ?? [])
        // Each record's member, built from the metadata as it comes (no copies into lists first).
        var entries: [(Inode, DirectoryListing.Member)] = []
        // Names the kernel must forget in listings a member left (see `add`).
        var left: [Invalidation] = []
        func add(_ metadata: RecordMetadata, _ state: inout FileSystemState) {
            guard !hidden.contains(metadata.identity), let member = member(for: metadata) else { return }
            entries.append((metadata.identity, member))
            // The store may be ahead of the listings: a commit of this process (the sync's writer)
            // that moved the record here landed during this request, and its change is applied
            // after it. The record leaves the listing that still holds it now; applying the change
            // then finds it here already (`ListingAheadOfChangesTests`).
            if let previous = state.names.parentOf[metadata.identity], previous != inode {
                for rename in state.names.listings[previous]?.remove(metadata.identity) ?? [] {
                    if let old = rename.old { left.append(.entry(parent: previous, name: old)) }
                }
            }
            state.names.parentOf[metadata.identity] = inode
        }
        let folder: RecordID?
        switch inode {
        case Self.rootInode: folder = nil
        case Self.recoveredInode: folder = FolderContents.recoveredID
        default:
            guard let metadata = database.metadata(identity: inode) else {
                if state.scratchFiles.files[inode] != nil { throw .notDirectory }
                throw .noEntry
            }
            guard metadata.recordType == Folder.recordType else { throw .notDirectory }
            folder = metadata.recordID
        }
        let tree = folderTree(&state)
        FolderContents.forEachMember(of: folder, tree: tree, in: database) { add($0, &state) }
        if inode == Self.rootInode, tree.showsRecovered(in: database) {
            entries.append((Self.recoveredInode, Self.recoveredMember))
            state.names.parentOf[Self.recoveredInode] = Self.rootInode
        }
        for file in state.scratchFiles.files.values where file.parent == inode && !file.isUnnamed {
            entries.append((file.inode, scratchMember(file)))
        }
        let listing = DirectoryListing(entries)
        state.names.listings[inode] = listing
        if !left.isEmpty { notifyKernel(left) }
        return listing
    }

    func scratchMember(_ file: ScratchFile) -> DirectoryListing.Member {
        DirectoryListing.Member(
            recordName: "", recordType: DirectoryListing.scratchType, title: file.name, created: .distantPast)
    }

    /// The inode named `name` in directory `parent` (a hard link's target for a `Link`).
    func child(_ parent: Inode, _ name: String, _ state: inout FileSystemState) throws(Errno) -> Inode {
        guard let inode = try listing(parent, &state).inode(named: name) else { throw .noEntry }
        return inode
    }

    /// The entry named `name` in directory `parent` as listed: a `Link` record's own identity.
    func listedChild(_ parent: Inode, _ name: String, _ state: inout FileSystemState) throws(Errno) -> Inode {
        guard let inode = try listing(parent, &state).names[name] else { throw .noEntry }
        return inode
    }

    /// Validates a name from the kernel: UTF-8, at most 255 bytes, not `.`/`..`.
    func validName(_ name: FileName) throws(Errno) -> String {
        guard name.bytes.count <= EntryNames.maximumNameLength else { throw .nameTooLong }
        guard let string = name.string else {
            Log.warning("refused a file name that is not UTF-8: \(name)")
            throw Errno(rawValue: EILSEQ)
        }
        guard !name.isDotOrDotDot, !string.isEmpty else { throw .invalidArgument }
        return string
    }
}

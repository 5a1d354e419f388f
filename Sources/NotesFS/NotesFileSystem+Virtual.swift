import FUSE
import Foundation
import Notes
import RecordStore

/// The virtual trees at the root (``VirtualTree``: `.recent`, `.search`, `.history`), served here
/// for every tree alike (their files' opens and reads: `NotesFileSystem+VirtualFiles.swift`).
///
/// - **Names at the root.** A tree's name is found by lookup and never listed by the root's
///   readdir. A real folder or file of that name at the root (made by the CLI, or another machine)
///   takes the name: the tree is then not reachable until it goes.
/// - **Read-only.** Every change in a tree (create, mkdir, mknod, symlink, link, unlink, rmdir,
///   rename into, out of or within it, setattr, a writable open, setxattr, removexattr) and to a
///   tree's own name at the root is `EROFS` (``VirtualTreeError/readOnly``, mapped by
///   ``ErrnoMapping``). Directories are `r-x`, owned like the root; links `rwx`; files `r--`.
/// - **Fresh.** Entries and attributes of virtual nodes are given to the kernel with timeout 0:
///   it asks again at every path walk and `stat`, and it never caches a readdir, so a listing, a
///   lookup or a `readlink` answers from the mount's view of the store as it is now (the change
///   is the kernel-side invalidation: nothing virtual is ever cached there). What a directory
///   holds is asked of its tree outside the state lock and kept, with its links' names and
///   targets and which entries each of the last few callers may be told of, until the next store
///   change is applied to the listings or an editor's rename hides a record
///   (``VirtualNodeTable/CacheKey``, ``VirtualNodeTable/CachedListing``): a save, rename, chmod
///   or delete made here shows at once, and a lookup of each of N entries costs no N decisions.
///   Opening a virtual directory first catches up with other processes' commits (`refresh`), so
///   a change made by the CLI shows in the next `ls` (and in lookups within the second the
///   store's watcher takes).
/// - **Inodes** are numbered by ``VirtualNodeTable`` (2^56 up) with the kernel's lookup counts.
extension NotesFileSystem {
    /// One entry of a virtual directory as the mount shows it.
    struct VirtualItem: Sendable {
        enum Kind: Sendable {
            case directory(path: [String], access: VirtualAccess)
            case link(target: [UInt8], metadata: RecordMetadata)
            case file(VirtualFile)
        }
        var name: String
        var kind: Kind

        /// Its kind in ``VirtualNodeTable`` (in tree number `tree`).
        func nodeKind(_ tree: Int) -> VirtualNodeTable.Node.Kind {
            switch kind {
            case .directory(let path, _): .directory(tree: tree, path: path)
            case .link: .link
            case .file: .file
            }
        }

        /// Whose access it gives (``VirtualAccess``): a link its record's.
        var access: VirtualAccess {
            switch kind {
            case .directory(_, let access): access
            case .link(_, let metadata): .record(metadata.recordID)
            case .file(let file): file.access
            }
        }
    }

    /// A virtual directory's items as named, in the order listed, and found by name (a `stat` of
    /// each of 1,000 versions must not scan the listing each time).
    struct VirtualListing: Sendable {
        let items: [VirtualItem]
        private let positions: [String: Int]

        init(_ items: [VirtualItem]) {
            self.items = items
            var positions: [String: Int] = [:]
            for (index, item) in items.enumerated() where positions[item.name] == nil { positions[item.name] = index }
            self.positions = positions
        }

        subscript(name: String) -> VirtualItem? { positions[name].map { items[$0] } }
    }

    /// The tree whose name is `name` at the root, unless a real entry takes the name.
    private func rootTree(named name: String, _ state: inout FileSystemState) -> Int? {
        guard let tree = virtualTrees.firstIndex(where: { $0.name == name }) else { return nil }
        if (try? listing(Self.rootInode, &state).names[name]) != nil { return nil }
        return tree
    }

    /// Whether `inode` is a node of a virtual tree (the range test spares the lock for others).
    func isVirtualNode(_ inode: Inode) -> Bool {
        VirtualNodeTable.isVirtual(inode) && state.withLock { $0.virtualNodes.nodes[inode] != nil }
    }

    // MARK: Refusing changes

    /// Throws `EROFS` (through ``ErrnoMapping``) when `parent` is a virtual directory, or when
    /// `name` in the root is a virtual tree's name that no real entry takes.
    func refuseVirtualChange(in parent: Inode, name: FileName? = nil) throws(Errno) {
        if isVirtualNode(parent) { throw ErrnoMapping.errno(for: VirtualTreeError.readOnly) }
        guard parent == Self.rootInode, let name = name?.string, virtualTrees.contains(where: { $0.name == name }) else { return }
        if try locked({ state in rootTree(named: name, &state) != nil }) {
            throw ErrnoMapping.errno(for: VirtualTreeError.readOnly)
        }
    }

    /// Throws `EROFS` (through ``ErrnoMapping``) when `inode` is a virtual node.
    func refuseVirtualChange(of inode: Inode) throws(Errno) {
        if isVirtualNode(inode) { throw ErrnoMapping.errno(for: VirtualTreeError.readOnly) }
    }

    // MARK: What a directory holds

    /// The entries of virtual directory `directory` that `caller` may be told of
    /// (``mayFind(_:_:)``), named from those alone, with their targets.
    /// - Throws: `ENOENT` when it is not a known virtual directory (`ENOTDIR` for a link); the
    ///   tree's error, mapped.
    func virtualItems(_ directory: Inode, caller: RequestContext) throws(Errno) -> VirtualListing {
        let known = try locked { (state) throws -> KnownDirectory in
            guard let node = state.virtualNodes.nodes[directory] else { throw Errno.noEntry }
            guard case .directory(let tree, let path) = node.kind else { throw Errno.notDirectory }
            let key = virtualCacheKey(state)
            var known = KnownDirectory(tree: tree, path: path, key: key)
            if let cached = state.virtualNodes.listings[directory], cached.key.appliedChanges == key.appliedChanges {
                known.entries = cached.entries
            }
            return known
        }
        var entries = known.entries ?? []
        if known.entries == nil {
            let (tree, path) = (known.tree, known.path)
            guard let search = searchBox.withLock({ $0 }) else { throw Errno.io }
            do {
                entries = try virtualTrees[tree].entries(in: path, virtualContext(search, generation: known.key))
            } catch {
                Log.error("\(virtualTrees[tree].name)/\(path.joined(separator: "/")): \(error)")
                throw ErrnoMapping.errno(for: error)
            }
        }
        var asking = Caller(caller)
        return try locked { state in
            var listing = state.virtualNodes.listings[directory] ?? VirtualNodeTable.CachedListing(key: known.key, entries: entries)
            if listing.key != known.key { listing = VirtualNodeTable.CachedListing(key: known.key, entries: entries) }
            // This caller's answer, kept (under the listing's state lock) while nothing changed:
            // only the decisions that do not rest on records alone are made again.
            if let answer = listing.shown.last(where: { asking.isAnswered(like: $0.uid, $0.gid, groups: $0.groups) }),
                answer.unsettled.allSatisfy({ decide(Self.access(of: listing.entries[$0]), &asking, &state).may == answer.visible[$0] })
            {
                return answer.items
            }
            var decided: [VirtualAccess: Decision] = [:]  // one decision per record in a listing
            var unsettled: [Int] = []
            var visible: [Bool] = []
            visible.reserveCapacity(listing.entries.count)
            for (index, entry) in listing.entries.enumerated() {
                let access = Self.access(of: entry)
                let decision = decided[access] ?? decide(access, &asking, &state)
                decided[access] = decision
                if !decision.isSettled { unsettled.append(index) }
                visible.append(decision.may)
            }
            // Another caller that sees the same entries is shown the same names.
            let items =
                listing.shown.first(where: { $0.visible == visible })?.items
                ?? VirtualListing(named(zip(listing.entries, visible).filter(\.1).map(\.0), tree: known.tree, path: known.path, &state))
            let groups = asking.decidedByGroups ? asking.supplementaryGroups() : nil
            listing.remember(
                VirtualNodeTable.Shown(
                    uid: asking.uid, gid: asking.gid, groups: groups, visible: visible, unsettled: unsettled, items: items))
            // Kept under the key read before asking: a change applied since makes it ask again.
            state.virtualNodes.setListing(of: directory, listing)
            return items
        }
    }

    /// ``mayFind(_:_:_:)``, counted in ``VirtualNodeTable/permissionDecisions``.
    private func decide(_ access: VirtualAccess, _ caller: inout Caller, _ state: inout FileSystemState) -> Decision {
        state.virtualNodes.permissionDecisions += 1
        return mayFind(access, &caller, &state)
    }

    /// Whose access `entry` gives (``VirtualAccess``): a link its record's.
    static func access(of entry: VirtualEntry) -> VirtualAccess {
        switch entry {
        case .directory(_, let access): access
        case .link(let id): .record(id)
        case .file(let file): file.access
        }
    }

    /// What the virtual listings are made from now (``VirtualNodeTable/CacheKey``).
    func virtualCacheKey(_ state: borrowing FileSystemState) -> VirtualNodeTable.CacheKey {
        VirtualNodeTable.CacheKey(appliedChanges: state.appliedChanges, hidden: state.names.detached.values.reduce(0) { $0 + $1.count })
    }

    /// What a tree may use to answer (``VirtualContext``).
    func virtualContext(_ search: any NoteSearching, generation: VirtualNodeTable.CacheKey) -> VirtualContext {
        VirtualContext(
            database: database, search: search,
            mountPaths: { [weak self] records in
                guard let self else { return records.map { _ in nil } }
                return (try? self.locked { state in records.map { self.mountPath(of: $0, &state) } }) ?? records.map { _ in nil }
            }, generation: generation)
    }

    /// A virtual directory and what its tree last answered, if that still holds.
    private struct KnownDirectory: Sendable {
        var tree: Int
        var path: [String]
        var key: VirtualNodeTable.CacheKey
        /// The tree's answer, if the store changed nothing since.
        var entries: [VirtualEntry]?
    }

    /// `entries` as the mount shows them (``VirtualLinkNames``); records it does not show, and
    /// targets longer than a path may be, are left out.
    private func named(_ entries: [VirtualEntry], tree: Int, path: [String], _ state: inout FileSystemState) -> [VirtualItem] {
        var items: [VirtualItem] = []
        var hits: [VirtualLinkNames.Hit] = []
        var linked: [RecordMetadata] = []
        for entry in entries {
            switch entry {
            case .directory(let name, let access):
                items.append(VirtualItem(name: name, kind: .directory(path: path + [name], access: access)))
            case .file(let file):
                items.append(VirtualItem(name: file.name, kind: .file(file)))
            case .link(let id):
                guard let metadata = database.metadata(for: id), let mountPath = mountPath(of: metadata, &state) else { continue }
                hits.append(VirtualLinkNames.Hit(recordName: id.recordName, path: mountPath))
                linked.append(metadata)
            }
        }
        var seen = Set(items.map(\.name))
        for ((hit, metadata), name) in zip(zip(hits, linked), VirtualLinkNames.names(hits)) {
            let target = VirtualLinkNames.target(depth: path.count + 1, path: hit.path)
            guard target.count < Int(PATH_MAX), seen.insert(name).inserted else { continue }
            items.append(VirtualItem(name: name, kind: .link(target: target, metadata: metadata)))
        }
        return items
    }

    /// Folders deeper than this are not followed to the root (a path the kernel could not walk).
    static let maximumMountDepth = 2048

    /// Where a record shows in the mount: the names of the folders from the root down, then its
    /// own file name, as listed (collision suffixes and `Recovered` included); nil when it does
    /// not show (hidden behind an editor's backup name, an unknown type).
    func mountPath(of metadata: RecordMetadata, _ state: inout FileSystemState) -> [String]? {
        guard let chain = directoryChain(above: metadata, &state) else { return nil }
        var names: [String] = []
        var inode = metadata.identity
        for directory in chain {
            guard let name = (try? listing(directory, &state))?.nameOf[inode] else { return nil }
            names.append(name)
            inode = directory
        }
        return names.reversed()
    }

    /// The directories above `metadata`'s record as the mount shows it, nearest first, ending
    /// with the root (`Recovered` above what it holds); nil when a folder on the way is missing
    /// or the chain is deeper than ``maximumMountDepth``.
    func directoryChain(above metadata: RecordMetadata, _ state: inout FileSystemState) -> [Inode]? {
        var chain: [Inode] = []
        var parent = parentInode(of: metadata, &state)
        for _ in 0..<Self.maximumMountDepth {
            guard let directory = parent else { return nil }
            chain.append(directory)
            if directory == Self.rootInode { return chain }
            if directory == Self.recoveredInode {
                parent = Self.rootInode
            } else {
                guard let folder = database.metadata(identity: directory) else { return nil }
                parent = parentInode(of: folder, &state)
            }
        }
        return nil
    }

    // MARK: Lookup and attributes

    /// `lookup` of a virtual tree's name at the root or of a name in a virtual directory; nil
    /// when `parent` and `name` are not virtual (the real tree answers). A name `caller` may not
    /// be told of (``mayFind(_:_:)``) is `ENOENT`.
    func lookupVirtual(parent: Inode, name: String, caller: RequestContext) throws(Errno) -> Entry? {
        if parent == Self.rootInode {
            guard virtualTrees.contains(where: { $0.name == name }) else { return nil }
            return try locked { (state) throws -> Entry? in
                guard let tree = rootTree(named: name, &state) else { return nil }
                let inode = state.virtualNodes.inode(parent: parent, name: name, kind: .directory(tree: tree, path: []), pinned: true)
                state.virtualNodes.countLookup(inode)
                return try virtualEntry(inode, item: nil, &state)
            }
        }
        guard VirtualNodeTable.isVirtual(parent), let directory = state.withLock({ $0.virtualNodes.nodes[parent] }) else { return nil }
        guard case .directory(let tree, let path) = directory.kind else { throw .notDirectory }
        let item = listedItem(named: name, in: try virtualItems(parent, caller: caller), tree: tree)
        return try locked { (state) throws -> Entry? in
            let kind: VirtualNodeTable.Node.Kind
            if let item {
                kind = item.name == name ? item.nodeKind(tree) : .directory(tree: tree, path: path + [name])
            } else if virtualTrees[tree].isDirectory(path + [name]) {
                kind = .directory(tree: tree, path: path + [name])
            } else {
                throw Errno.noEntry
            }
            let inode = state.virtualNodes.inode(parent: parent, name: name, kind: kind)
            state.virtualNodes.countLookup(inode)
            return try virtualEntry(inode, item: item, &state)
        }
    }

    /// What `listing` (of a directory of tree number `tree`) has under `name`: that very name, or
    /// for a tree that folds case (``VirtualTree/foldsCase``) a directory named so in another case.
    func listedItem(named name: String, in listing: VirtualListing, tree: Int) -> VirtualItem? {
        if let item = listing[name] { return item }
        guard virtualTrees[tree].foldsCase else { return nil }
        let folded = name.lowercased()
        return listing.items.first { item in
            guard case .directory = item.kind else { return false }
            return item.name.lowercased() == folded
        }
    }

    /// The entry of virtual node `inode` (`item`: what its directory lists under its name; a
    /// link needs it). Timeouts are 0: see the type's documentation.
    private func virtualEntry(_ inode: Inode, item: VirtualItem?, _ state: inout FileSystemState) throws(Errno) -> Entry {
        Entry(try virtualAttributes(inode, item: item, &state), attributeTimeout: 0, entryTimeout: 0)
    }

    /// The attributes of virtual node `inode` (`item`: what its directory lists under its name; a
    /// tree's own directory, listed nowhere, has none). A directory or file takes the owner,
    /// group and read bits of the record it stands for (``virtualMode(_:directory:)``).
    private func virtualAttributes(_ inode: Inode, item: VirtualItem?, _ state: inout FileSystemState) throws(Errno) -> Attributes {
        guard let node = state.virtualNodes.nodes[inode] else { throw .noEntry }
        if node.isDirectory {
            let access = resolve(item?.access ?? .tree, &state)
            return Attributes(
                inode: inode, mode: Self.virtualMode(access, directory: true), linkCount: 2, uid: access.uid, gid: access.gid,
                size: 4096, accessTime: mountTime, modificationTime: mountTime, changeTime: mountTime)
        }
        switch item?.kind {
        case .link(let target, let metadata):
            let time = Self.fileTime(metadata)
            return Attributes(
                inode: inode, mode: S_IFLNK | 0o777, uid: options.uid, gid: options.gid, size: UInt64(target.count),
                accessTime: time, modificationTime: time, changeTime: time)
        case .file(let file):
            let time = Self.fileTime(file.modificationDate)
            let access = resolve(file.access, &state)
            return Attributes(
                inode: inode, mode: Self.virtualMode(access, directory: false), uid: access.uid, gid: access.gid,
                size: UInt64(max(file.size, 0)), accessTime: time, modificationTime: time, changeTime: time)
        case .directory, nil:
            throw .noEntry
        }
    }

    /// What virtual node `inode`'s directory lists under its name now; nil for a directory its
    /// directory does not list (a tree's own, `.search/QUERY`).
    /// - Throws: `ENOENT` when a link's or file's name is gone from its directory.
    func currentItem(of inode: Inode, caller: RequestContext) throws(Errno) -> (node: VirtualNodeTable.Node, item: VirtualItem?) {
        guard let node = state.withLock({ $0.virtualNodes.nodes[inode] }) else { throw .noEntry }
        if node.isDirectory {
            guard VirtualNodeTable.isVirtual(node.parent), state.withLock({ $0.virtualNodes.nodes[node.parent] != nil }) else {
                return (node, nil)
            }
            return (node, try? virtualItems(node.parent, caller: caller)[node.name])
        }
        guard let item = try virtualItems(node.parent, caller: caller)[node.name] else { throw .noEntry }
        return (node, item)
    }

    /// `getattr` of a virtual node; nil for any other inode.
    func virtualAttributes(_ inode: Inode, caller: RequestContext) throws(Errno) -> AttributesReply? {
        guard isVirtualNode(inode) else { return nil }
        let (_, item) = try currentItem(of: inode, caller: caller)
        return AttributesReply(try locked { (state) throws in try virtualAttributes(inode, item: item, &state) }, timeout: 0)
    }

    /// `readlink` of a virtual link; nil for any other inode.
    func readVirtualLink(_ inode: Inode, caller: RequestContext) throws(Errno) -> [UInt8]? {
        guard isVirtualNode(inode) else { return nil }
        guard case .link(let target, _)? = try currentItem(of: inode, caller: caller).item?.kind else { throw .invalidArgument }
        return target
    }

    /// `forget` of a virtual node (false for any other inode).
    func forgetVirtual(_ inode: Inode, lookups: UInt64) -> Bool {
        guard VirtualNodeTable.isVirtual(inode) else { return false }
        return state.withLock { state in
            guard state.virtualNodes.nodes[inode] != nil else { return false }
            state.virtualNodes.forget(inode, lookups: lookups)
            return true
        }
    }

    // MARK: Listing

    /// `opendir` of a virtual directory: a snapshot of what it holds now (after catching up with
    /// other processes' commits), of the entries `caller` may be told of (``mayFind(_:_:)``); nil
    /// for any other inode.
    func opendirVirtual(_ inode: Inode, caller: RequestContext) throws(Errno) -> Opened? {
        guard isVirtualNode(inode) else { return nil }
        try? database.refresh()  // a failure shows in the next commit; the listing is the index's
        let items = try virtualItems(inode, caller: caller).items
        return try locked { (state) throws in
            guard let node = state.virtualNodes.nodes[inode] else { throw Errno.noEntry }
            state.virtualNodes.dropUnreferencedChildren(of: inode)
            var entries = [
                DirectorySnapshotEntry(name: ".", inode: inode, mode: S_IFDIR),
                DirectorySnapshotEntry(name: "..", inode: node.parent, mode: S_IFDIR),
            ]
            for item in items {
                let mode: mode_t =
                    switch item.kind {
                    case .directory: S_IFDIR
                    case .link: S_IFLNK
                    case .file: S_IFREG
                    }
                entries.append(DirectorySnapshotEntry(name: item.name, inode: 0, mode: mode))
            }
            let handle = state.newHandle()
            state.directories.snapshots[handle] = entries
            return Opened(handle: handle)
        }
    }

    /// `readdir` (`plus`: `readdirplus`) of a virtual directory; false for any other inode. Each
    /// snapshot name is checked against what the directory holds now (as for real directories):
    /// a name gone since `opendir` is skipped.
    func readdirVirtual(
        _ inode: Inode, handle: UInt64, offset: Int64, plus: Bool, caller: RequestContext,
        add: (FileName, Entry, Int64) -> Bool
    ) throws(Errno) -> Bool {
        guard isVirtualNode(inode) else { return false }
        let current = (try? virtualItems(inode, caller: caller)) ?? VirtualListing([])
        try locked { (state) throws in
            guard let entries = state.directories.snapshots[handle] else { throw Errno.badFileDescriptor }
            guard case .directory(let tree, _)? = state.virtualNodes.nodes[inode]?.kind else { return }
            var index = offset < 0 ? entries.count : Int(clamping: offset)
            while index < entries.count {
                let item = entries[index]
                index += 1
                let entry: Entry
                var child = item.inode
                var listed: VirtualItem?
                if item.name != "." && item.name != ".." {
                    guard let live = current[item.name] else { continue }
                    child = state.virtualNodes.inode(parent: inode, name: live.name, kind: live.nodeKind(tree))
                    listed = live
                }
                if !plus {
                    entry = Entry(Attributes(inode: child, mode: item.mode), attributeTimeout: 0, entryTimeout: 0)
                } else if VirtualNodeTable.isVirtual(child) {
                    guard let virtual = try? virtualEntry(child, item: listed, &state) else { continue }
                    entry = virtual
                } else {
                    guard let real = try? self.entry(child, state) else { continue }
                    entry = real
                }
                guard add(FileName(item.name), entry, Int64(index)) else { break }
                if plus, listed != nil { state.virtualNodes.countLookup(child) }
            }
        }
        return true
    }
}

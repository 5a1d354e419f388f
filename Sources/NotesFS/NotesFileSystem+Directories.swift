import FUSE
import Foundation
import Notes
import RecordStore

/// Directories: mkdir, rmdir, and readdir over a snapshot taken at opendir.
extension NotesFileSystem {
    public func mkdir(_ context: RequestContext, parent: Inode, name: FileName, mode: mode_t) throws(Errno) -> Entry {
        let string = try validName(name)
        try refuseVirtualChange(in: parent)
        return try locked { (state) throws in
            let parentFolder = try folderReference(parent, state)
            try refuseNewEntry(in: parent, state)
            if try listing(parent, &state).names[string] != nil { throw Errno.exists }
            var folder = Folder(name: EntryNames.name(fromFileName: string), parent: parentFolder)
            let (permissions, inherited) = newEntryAccess(mode, in: parent, directory: true, context, state)
            folder.ownership = Ownership(mode: UInt32(permissions), uid: context.uid, gid: context.gid)
            var record = folder.record
            inherited.write(into: &record)
            return try entry(try Self.inode(of: try saveOne(record, touching: try touchedFolders([parent], &state))), state)
        }
    }

    /// Deletes an empty folder; `ENOTEMPTY` otherwise (cascading deletion is the store's, not rmdir's).
    public func rmdir(_ context: RequestContext, parent: Inode, name: FileName) throws(Errno) {
        let string = try validName(name)
        try refuseVirtualChange(in: parent, name: name)
        try locked { (state) throws in
            try resolvingAgain(&state) { (state) throws in
                let inode = try child(parent, string, &state)
                if inode == Self.recoveredInode { throw Errno.readOnly }
                guard case .folder(let metadata) = try node(inode, state) else { throw Errno.notDirectory }
                try refuseStaleName(inode, metadata, in: parent, &state)
                try refuseRemoval(of: inode, from: parent, state)
                let contents = try listing(inode, &state)
                guard contents.names.isEmpty, state.names.detached[inode]?.isEmpty ?? true else { throw Errno.notEmpty }
                // Empty at commit time too: a note another process moved in since is not deleted with it.
                try database.modify(
                    saving: try touchedFolders([parent], &state), deleting: [metadata.recordID],
                    deleteConditions: [
                        metadata.recordID: DeleteCondition(recordChangeTag: metadata.recordChangeTag, refusesCascade: true)
                    ])
            }
        }
    }

    public func opendir(_ context: RequestContext, inode: Inode, flags: Int32) throws(Errno) -> Opened {
        if let opened = try opendirVirtual(inode, caller: context) { return opened }
        return try locked { (state) throws in
            let listing = try listing(inode, &state)
            if !options.noDirectoryAccessTime, case .folder(let metadata) = try node(inode, state), noteRead(inode, metadata, &state) {
                notifyKernel([.attributes(inode)])
            }
            let parent = inode == Self.rootInode ? inode : (state.names.parentOf[inode] ?? Self.rootInode)
            var entries = [
                DirectorySnapshotEntry(name: ".", inode: inode, mode: S_IFDIR),
                DirectorySnapshotEntry(name: "..", inode: parent, mode: S_IFDIR),
            ]
            for (name, child) in listing.names.sorted(by: { $0.key < $1.key }) {
                entries.append(
                    DirectorySnapshotEntry(name: name, inode: listing.inode(named: name) ?? child, mode: listing.fileType(of: child)))
            }
            let handle = state.newHandle()
            state.directories.snapshots[handle] = entries
            if case .folder? = try? node(inode, state) { state.directories.open[handle] = inode }
            return Opened(handle: handle)
        }
    }

    /// The attributes a deleted folder held open shows (``FileSystemState/removedDirectories``).
    func removedDirectoryAttributes(_ inode: Inode, _ metadata: RecordMetadata, _ state: borrowing FileSystemState) -> Attributes {
        let times = times(inode, metadata, state)
        let permissions = metadata.field(MountFields.mode)?.int64Value.map { mode_t(truncatingIfNeeded: $0) & 0o7777 } ?? 0o755
        return Attributes(
            inode: inode, mode: S_IFDIR | permissions, linkCount: 0,
            uid: metadata.field(MountFields.uid)?.int64Value.map { uid_t(truncatingIfNeeded: $0) } ?? options.uid,
            gid: metadata.field(MountFields.gid)?.int64Value.map { gid_t(truncatingIfNeeded: $0) } ?? options.gid, size: 4096,
            accessTime: times.access, modificationTime: times.modification, changeTime: FileTime.now)
    }

    /// The snapshot entry at `index` as it is *now*.
    ///
    /// Invariant: every entry handed to the kernel names the inode that the name
    /// has at the moment of the reply, or is not handed out. The snapshot taken at `opendir` only
    /// fixes which names are offered and their offsets; each name is re-resolved against the live
    /// listing under the state lock, so a name renamed or deleted since `opendir` is skipped and a
    /// name re-created since carries its new inode (and, for readdirplus, the live node's
    /// attributes). Otherwise the kernel would cache a stale name → inode, and a later
    /// `open(O_CREAT)` of that name would write into another file. Between this answer and the
    /// kernel's use of it nothing moves: the kernel holds the directory's lock (shared) across a
    /// readdir request, and create, rename and unlink in it take that lock exclusively; changes made
    /// by other processes are followed by invalidations (`applyPendingChanges`).
    private func liveEntry(_ item: DirectorySnapshotEntry, in listing: DirectoryListing?) -> DirectorySnapshotEntry? {
        if item.name == "." || item.name == ".." { return item }
        guard let listing, let listed = listing.names[item.name], let inode = listing.inode(named: item.name) else { return nil }
        return DirectorySnapshotEntry(name: item.name, inode: inode, mode: listing.fileType(of: listed))
    }

    public func readdir(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, into buffer: DirectoryBuffer) throws(Errno)
    {
        let virtual = try readdirVirtual(inode, handle: handle, offset: offset, plus: false, caller: context) { name, entry, next in
            buffer.add(name, inode: entry.inode, mode: entry.attributes.mode, nextOffset: next)
        }
        if virtual { return }
        try locked { (state) throws in
            guard let entries = state.directories.snapshots[handle] else { throw Errno.badFileDescriptor }
            // Offsets are indices into the snapshot; skipped entries still count. The directory
            // itself may be gone: then only `.` and `..` are left.
            let current = try? listing(inode, &state)
            var index = offset < 0 ? entries.count : Int(clamping: offset)
            while index < entries.count {
                let item = entries[index]
                index += 1
                guard let live = liveEntry(item, in: current) else { continue }
                guard buffer.add(FileName(live.name), inode: live.inode, mode: live.mode, nextOffset: Int64(index)) else { break }
            }
        }
    }

    public func readdirplus(
        _ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, into buffer: DirectoryPlusBuffer
    ) throws(Errno) {
        let virtual = try readdirVirtual(inode, handle: handle, offset: offset, plus: true, caller: context) { name, entry, next in
            buffer.add(name, entry: entry, nextOffset: next)
        }
        if virtual { return }
        try locked { (state) throws in
            guard let entries = state.directories.snapshots[handle] else { throw Errno.badFileDescriptor }
            let current = try? listing(inode, &state)
            var index = offset < 0 ? entries.count : Int(clamping: offset)
            while index < entries.count {
                let item = entries[index]
                index += 1
                guard let live = liveEntry(item, in: current), let entry = try? entry(live.inode, state) else { continue }
                guard buffer.add(FileName(live.name), entry: entry, nextOffset: Int64(index)) else { break }
            }
        }
    }

    public func releasedir(_ context: RequestContext, inode: Inode, handle: UInt64) throws(Errno) {
        state.withLock { state in
            state.directories.snapshots[handle] = nil
            guard let folder = state.directories.open.removeValue(forKey: handle) else { return }
            if !state.directories.open.values.contains(folder) { state.directories.removed[folder] = nil }
        }
    }
}

import FUSE
import Foundation
import Notes
import RecordStore

/// Directories: mkdir, rmdir, and readdir over a snapshot taken at opendir.
extension NotesFileSystem {
    public func mkdir(_ context: RequestContext, parent: Inode, name: FileName, mode: mode_t) throws(Errno) -> Entry {
        let string = try validName(name)
        return try locked { (state) throws in
            let parentFolder = try folderReference(parent, state)
            if try listing(parent, &state).names[string] != nil { throw Errno.exists }
            var folder = Folder(name: EntryNames.name(fromFileName: string), parent: parentFolder)
            folder.ownership = Ownership(mode: UInt32(mode & ~context.umask & 0o7777), uid: context.uid, gid: context.gid)
            let saved = try database.modify(saving: [folder.record]).savedRecords[0]
            return try entry(saved.identity!, state)
        }
    }

    /// Deletes an empty folder; `ENOTEMPTY` otherwise (cascading deletion is the store's, not rmdir's).
    public func rmdir(_ context: RequestContext, parent: Inode, name: FileName) throws(Errno) {
        let string = try validName(name)
        try locked { (state) throws in
            let inode = try child(parent, string, &state)
            guard case .folder(let metadata) = try node(inode, state) else { throw Errno.notDirectory }
            let contents = try listing(inode, &state)
            guard contents.names.isEmpty, state.detached[inode]?.isEmpty ?? true else { throw Errno.notEmpty }
            try database.modify(deleting: [metadata.recordID])
        }
    }

    public func opendir(_ context: RequestContext, inode: Inode, flags: Int32) throws(Errno) -> Opened {
        try locked { (state) throws in
            let listing = try listing(inode, &state)
            let parent = inode == Self.rootInode ? inode : (state.parentOf[inode] ?? Self.rootInode)
            var entries = [
                DirectorySnapshotEntry(name: ".", inode: inode, mode: S_IFDIR),
                DirectorySnapshotEntry(name: "..", inode: parent, mode: S_IFDIR),
            ]
            for (name, child) in listing.names.sorted(by: { $0.key < $1.key }) {
                let isDirectory = listing.members[child]?.isDirectory ?? false
                entries.append(DirectorySnapshotEntry(name: name, inode: child, mode: isDirectory ? S_IFDIR : S_IFREG))
            }
            let handle = state.newHandle()
            state.directorySnapshots[handle] = entries
            return Opened(handle: handle)
        }
    }

    public func readdir(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, into buffer: DirectoryBuffer) throws(Errno) {
        try locked { (state) throws in
            guard let entries = state.directorySnapshots[handle] else { throw Errno.badFileDescriptor }
            var index = Int(offset)
            while index < entries.count {
                let item = entries[index]
                guard buffer.add(FileName(item.name), inode: item.inode, mode: item.mode, nextOffset: Int64(index + 1)) else { break }
                index += 1
            }
        }
    }

    public func readdirplus(
        _ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, into buffer: DirectoryPlusBuffer
    ) throws(Errno) {
        try locked { (state) throws in
            guard let entries = state.directorySnapshots[handle] else { throw Errno.badFileDescriptor }
            var index = Int(offset)
            while index < entries.count {
                let item = entries[index]
                index += 1
                // An entry deleted since opendir is skipped (its offset still counts).
                guard let entry = try? entry(item.inode, state) else { continue }
                guard buffer.add(FileName(item.name), entry: entry, nextOffset: Int64(index)) else { break }
            }
        }
    }

    public func releasedir(_ context: RequestContext, inode: Inode, handle: UInt64) throws(Errno) {
        _ = state.withLock { $0.directorySnapshots.removeValue(forKey: handle) }
    }
}

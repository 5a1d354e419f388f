import FUSE
import Foundation
import Notes
import RecordStore

/// What an inode is.
enum Node: Sendable {
    case root
    /// The virtual, read-only `Recovered` directory.
    case recovered
    case folder(RecordMetadata)
    case note(RecordMetadata)
    case attachment(RecordMetadata)
    /// A `Symlink` or `SpecialFile` record (``NotesFileSystem/nodeAttributes(_:_:_:)``).
    case symlink(RecordMetadata)
    case special(RecordMetadata)
    /// A `Link` record (a hard link's further name), reached by its listed identity only: the
    /// kernel knows its target's inode (``DirectoryListing/inode(named:)``).
    case link(RecordMetadata)
    case scratch(ScratchFile)

    var metadata: RecordMetadata? {
        switch self {
        case .folder(let m), .note(let m), .attachment(let m), .symlink(let m), .special(let m), .link(let m): m
        case .root, .recovered, .scratch: nil
        }
    }
}

/// Field names the mount adds to records.
enum MountFields {
    static let mode = FieldName.mode
    static let uid = FieldName.uid
    static let gid = FieldName.gid
    /// The exact mtime in nanoseconds when set by `utimensat` (a `Date` cannot hold every nanosecond).
    static let modificationNanoseconds = "mtimeNanoseconds"
    /// atime in nanoseconds (``FileTimes``): set by `utimensat`, or a read's update at the next save.
    static let accessNanoseconds = "atimeNanoseconds"
    /// ctime in nanoseconds: set by every save the mount makes (content or metadata).
    static let changeNanoseconds = "ctimeNanoseconds"
    /// `FS_*_FL` inode flags (``InodeFlags``; NotesFileSystem+Flags.swift).
    static let inodeFlags = "inodeFlags"
}

/// lookup, getattr, setattr, statfs: attributes from record metadata (no record file is read).
extension NotesFileSystem {
    func node(_ inode: Inode, _ state: borrowing FileSystemState) throws(Errno) -> Node {
        if inode == Self.rootInode { return .root }
        if inode == Self.recoveredInode { return .recovered }
        if let target = state.names.aliases[inode] { return try node(target, state) }
        if let file = state.scratchFiles.files[inode] { return .scratch(file) }
        guard let metadata = database.metadata(identity: inode) else { throw .noEntry }
        switch metadata.recordType {
        case Folder.recordType: return .folder(metadata)
        case Note.recordType: return .note(metadata)
        case Attachment.recordType: return .attachment(metadata)
        case Symlink.recordType: return .symlink(metadata)
        case SpecialFile.recordType: return .special(metadata)
        case Link.recordType: return .link(metadata)
        default: throw .noEntry
        }
    }

    static func fileTime(_ metadata: RecordMetadata) -> FileTime {
        let date = metadata.modificationDate ?? Date(timeIntervalSince1970: 0)
        if let nanoseconds = metadata.field(MountFields.modificationNanoseconds)?.int64Value,
            abs(Double(nanoseconds) / 1e9 - date.timeIntervalSince1970) < 0.001
        {
            return fileTime(nanoseconds: nanoseconds)
        }
        return fileTime(date)
    }

    static func fileTime(_ date: Date) -> FileTime {
        // A damaged record may hold any double: clamp to what an Int64 of seconds can say.
        let interval = date.timeIntervalSince1970
        guard interval.isFinite, interval > -9.2e18, interval < 9.2e18 else {
            return FileTime(seconds: interval < 0 ? Int64.min / 2 : Int64.max / 2, nanoseconds: 0)
        }
        let seconds = interval.rounded(.down)
        let nanoseconds = min(999_999_999, Int64(((date.timeIntervalSince1970 - seconds) * 1e9).rounded()))
        return FileTime(seconds: Int64(seconds), nanoseconds: nanoseconds)
    }

    static func date(_ time: FileTime) -> Date {
        Date(timeIntervalSince1970: Double(time.seconds) + Double(time.nanoseconds) / 1e9)
    }

    func attributes(_ inode: Inode, _ state: borrowing FileSystemState) throws(Errno) -> Attributes {
        let inode = state.names.aliases[inode] ?? inode
        let node: Node
        do {
            node = try self.node(inode, state)
        } catch {
            // A deleted folder still open (``FileSystemState/removedDirectories``).
            if let removed = state.directories.removed[inode] { return removed }
            // An unlinked file still open: its bytes live on in memory.
            if let open = state.files.open[inode] {
                return Attributes(
                    inode: inode, mode: S_IFREG | 0o644, linkCount: 0, uid: options.uid, gid: options.gid,
                    size: UInt64(clamping: open.content.count), blocks: open.content.storedBlocks, accessTime: mountTime,
                    modificationTime: mountTime, changeTime: mountTime)
            }
            throw error
        }
        switch node {
        case .root, .recovered:
            var permissions: mode_t = 0o755
            if case .recovered = node { permissions = 0o555 }
            return Attributes(
                inode: inode, mode: S_IFDIR | permissions, linkCount: directoryLinkCount(inode, nil, state), uid: options.uid,
                gid: options.gid, size: 4096,
                accessTime: mountTime, modificationTime: mountTime, changeTime: mountTime)
        case .symlink(let m), .special(let m), .link(let m):
            return nodeAttributes(inode, m, state)
        case .scratch(let file) where file.symlinkTarget != nil:
            return nodeAttributes(file)
        case .scratch(let file):
            return Attributes(
                inode: inode, mode: S_IFREG | (file.mode & 0o7777), uid: file.uid, gid: file.gid,
                size: UInt64(clamping: file.content.count), blocks: file.content.storedBlocks,
                accessTime: state.pageCache.inodeCaches[accessTime: inode] ?? file.modificationTime,
                modificationTime: file.modificationTime,
                changeTime: file.modificationTime)
        case .folder(let m), .note(let m), .attachment(let m):
            let isDirectory: Bool
            if case .folder = node { isDirectory = true } else { isDirectory = false }
            let permissions =
                m.field(MountFields.mode)?.int64Value.map { mode_t(truncatingIfNeeded: $0) & 0o7777 } ?? (isDirectory ? 0o755 : 0o644)
            var size: UInt64
            var blocks: UInt64?  // nil: every byte stored (``storedBlocks(_:)``)
            var times = self.times(inode, m, state)
            let asset = m.field(FieldName.content)?.assetValue
            if let open = state.files.open[inode] {
                size = UInt64(clamping: open.content.count)
                // A clean buffer holds the asset's bytes: count them as the asset stores them.
                blocks = open.dirty ? open.content.storedBlocks : asset.map(storedBlocks)
                if let pending = open.pendingModificationTime {
                    times.modification = pending
                    if times.change < pending { times.change = pending }  // unsaved bytes: ctime moved with mtime
                }
            } else if let asset {
                size = UInt64(clamping: asset.size)  // an attachment, or a note kept as bytes
                blocks = storedBlocks(asset)
            } else if case .note = node {
                size = UInt64(clamping: m.byteCount(of: FieldName.text) ?? 0)
            } else if case .attachment = node {
                size = 0
            } else {
                size = 4096
            }
            if isDirectory { (size, blocks) = (4096, nil) }
            return Attributes(
                inode: inode, mode: (isDirectory ? S_IFDIR : S_IFREG) | permissions,
                linkCount: isDirectory ? directoryLinkCount(inode, m, state) : linkCount(m),
                uid: m.field(MountFields.uid)?.int64Value.map { uid_t(truncatingIfNeeded: $0) } ?? options.uid,
                gid: m.field(MountFields.gid)?.int64Value.map { gid_t(truncatingIfNeeded: $0) } ?? options.gid,
                size: size, blocks: blocks, accessTime: times.access, modificationTime: times.modification, changeTime: times.change)
        }
    }

    func entry(_ inode: Inode, _ state: borrowing FileSystemState) throws(Errno) -> Entry {
        Entry(try attributes(inode, state), attributeTimeout: options.cacheTimeout, entryTimeout: options.cacheTimeout)
    }

    public func lookup(_ context: RequestContext, parent: Inode, name: FileName) throws(Errno) -> Entry {
        let string = try validName(name)
        if let entry = try lookupVirtual(parent: parent, name: string, caller: context) { return entry }
        return try locked { (state) throws(Errno) in
            let inode = try child(parent, string, &state)
            return try entry(inode, state)
        }
    }

    public func forget(_ inode: Inode, lookups: UInt64) {
        if forgetVirtual(inode, lookups: lookups) { return }
        // Inodes are record identities, derived from the store: only a rename alias to free.
        _ = state.withLock { $0.names.aliases.removeValue(forKey: inode) }
    }

    public func getattr(_ context: RequestContext, inode: Inode, handle: UInt64?) throws(Errno) -> AttributesReply {
        if let reply = try virtualAttributes(inode, caller: context) { return reply }
        return try locked { (state) throws(Errno) in AttributesReply(try attributes(inode, state), timeout: options.cacheTimeout) }
    }

    public func setattr(_ context: RequestContext, inode: Inode, changes: SetAttributes) throws(Errno) -> AttributesReply {
        try refuseVirtualChange(of: inode)
        if changes.size != nil || changes.mode != nil || changes.uid != nil || changes.gid != nil
            || changes.modificationTime.map({ $0 != .now }) == true || changes.accessTime.map({ $0 != .now }) == true
        {
            try locked { (state) throws in try refuse(inode, ifFlagged: Self.lockedFlags, state) }
        } else if changes.modificationTime != nil || changes.accessTime != nil {
            try locked { (state) throws in try refuse(inode, ifFlagged: .immutable, state) }
        }
        if let size = changes.size { try truncate(inode, to: size) }
        return try locked { (state) throws in
            let node = try self.node(inode, state)
            let now = FileTime.now
            let time = changes.modificationTime.map { $0.resolved(now: now) }
            let accessTime = changes.accessTime.map { $0.resolved(now: now) }
            if case .scratch(let file) = node {
                if let mode = changes.mode { file.mode = mode }
                if let uid = changes.uid { file.uid = uid }
                if let gid = changes.gid { file.gid = gid }
                if let time {
                    file.modificationTime = time
                    file.modificationTimeWasSet = true
                }
                if let accessTime { state.pageCache.inodeCaches[accessTime: inode] = accessTime }  // a new file's: saved with it
            } else if let metadata = node.metadata {
                var recordTime = time
                if let time, let open = state.files.open[inode], open.dirty {
                    open.pendingModificationTime = time  // saved with the bytes, which would move it again
                    recordTime = nil
                }
                if changes.mode != nil || changes.uid != nil || changes.gid != nil || recordTime != nil || accessTime != nil {
                    var record = metadata.record  // partial: the text is kept as stored (a metadata-only save)
                    if let mode = changes.mode {
                        record[MountFields.mode] = .int64(Int64(mode & 0o7777))
                        try changeACLMode(of: metadata, to: mode, in: &record)
                    }
                    if let uid = changes.uid { record[MountFields.uid] = .int64(Int64(uid)) }
                    if let gid = changes.gid { record[MountFields.gid] = .int64(Int64(gid)) }
                    if let time = recordTime {
                        Self.setModificationTime(time, of: &record)
                    } else {
                        record.modificationDate = metadata.modificationDate
                    }
                    Self.stampChange(&record, inode: inode, &state)
                    if let accessTime {
                        state.pageCache.inodeCaches[accessTime: inode] = nil
                        record[MountFields.accessNanoseconds] = Self.nanoseconds(accessTime).map { .int64($0) }
                    }
                    let saved = try saveOne(record)
                    state.files.open[inode]?.baseTag = saved.recordChangeTag
                    if options.synchronous { try database.sync() }
                }
            }
            return AttributesReply(try attributes(inode, state), timeout: options.cacheTimeout)
        }
    }

    /// `truncate(2)`/`ftruncate(2)`: sets the size of a file's buffer (loaded outside the state
    /// lock; growing is sparse); by path (no writer holds it) the file is saved at once and the
    /// buffer dropped.
    /// - Throws: `EFBIG` past ``ContentBuffer/maximumSize``, `EISDIR`, the save's errors.
    func truncate(_ inode: Inode, to size: UInt64) throws(Errno) {
        guard size <= UInt64(ContentBuffer.maximumSize) else { throw .fileTooLarge }
        if case .folder = try locked({ (state) throws(Errno) in try self.node(inode, state) }) { throw .isDirectory }
        let open = try openFileLoading(inode)
        open.operationLock.lock()
        defer { open.operationLock.unlock() }
        let content: ContentBuffer = try locked { (state) throws in
            guard state.files.open[inode] === open else { return try openFile(inode, &state).content }
            open.markChanged()
            // truncate, ftruncate and O_TRUNC (a setattr of the size after open) move mtime and ctime.
            if let file = state.scratchFiles.files[inode] { file.modificationTime = .now } else { open.pendingModificationTime = .now }
            return open.content
        }
        try content.truncate(Int64(size))
        let unheld = try locked { state in state.files.open[inode] === open && open.handles == 0 }
        guard unheld else { return }
        try saveHoldingOperationLock(inode, open)
        // No writer holds it (truncate by path): drop the buffer so that reads and later opens
        // see the store.
        try locked { state in
            if state.files.open[inode] === open, open.handles == 0, !open.dirty { state.files.open[inode] = nil }
        }
    }

    static func setModificationTime(_ time: FileTime, of record: inout Record) {
        record.modificationDate = date(time)
        // Seconds beyond what nanoseconds in an Int64 can hold (year 2262) keep the date only.
        record[MountFields.modificationNanoseconds] = nanoseconds(time).map { .int64($0) }
    }

    public func statfs(_ context: RequestContext, inode: Inode) throws(Errno) -> FilesystemStatistics {
        var stats = statvfs()
        guard statvfs(database.path, &stats) == 0 else { throw Errno.current }
        let files = UInt64(database.recordCount)
        return FilesystemStatistics(
            blockSize: UInt(stats.f_bsize), fragmentSize: UInt(stats.f_frsize), blocks: UInt64(stats.f_blocks),
            freeBlocks: UInt64(stats.f_bfree), availableBlocks: UInt64(stats.f_bavail),
            files: files.addingReportingOverflow(UInt64(stats.f_ffree)).overflow ? UInt64.max : files + UInt64(stats.f_ffree),
            freeFiles: UInt64(stats.f_ffree), availableFiles: UInt64(stats.f_favail), maximumNameLength: 255)
    }
}

import FUSE
import Foundation
import Notes
import RecordStore

/// What an inode is.
enum Node {
    case root
    case folder(RecordMetadata)
    case note(RecordMetadata)
    case attachment(RecordMetadata)
    case scratch(ScratchFile)

    var metadata: RecordMetadata? {
        switch self {
        case .folder(let m), .note(let m), .attachment(let m): m
        case .root, .scratch: nil
        }
    }
}

/// Field names the mount adds to records.
enum MountFields {
    static let mode = "mode"
    static let uid = "uid"
    static let gid = "gid"
    /// The exact mtime in nanoseconds when set by `utimensat` (a `Date` cannot hold every nanosecond).
    static let modificationNanoseconds = "mtimeNanoseconds"
}

/// lookup, getattr, setattr, statfs: attributes from record metadata (no record file is read).
extension NotesFileSystem {
    func node(_ inode: Inode, _ state: borrowing FileSystemState) throws(Errno) -> Node {
        if inode == Self.rootInode { return .root }
        if let target = state.aliases[inode] { return try node(target, state) }
        if let file = state.scratch[inode] { return .scratch(file) }
        guard let metadata = database.metadata(identity: inode) else { throw .noEntry }
        switch metadata.recordType {
        case Folder.recordType: return .folder(metadata)
        case Note.recordType: return .note(metadata)
        case Attachment.recordType: return .attachment(metadata)
        default: throw .noEntry
        }
    }

    static func fileTime(_ metadata: RecordMetadata) -> FileTime {
        let date = metadata.record.modificationDate ?? Date(timeIntervalSince1970: 0)
        if let nanoseconds = metadata.record[MountFields.modificationNanoseconds]?.int64Value,
            abs(Double(nanoseconds) / 1e9 - date.timeIntervalSince1970) < 0.001
        {
            return FileTime(seconds: nanoseconds / 1_000_000_000, nanoseconds: nanoseconds % 1_000_000_000)
        }
        return fileTime(date)
    }

    static func fileTime(_ date: Date) -> FileTime {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        let nanoseconds = min(999_999_999, Int64(((date.timeIntervalSince1970 - seconds) * 1e9).rounded()))
        return FileTime(seconds: Int64(seconds), nanoseconds: nanoseconds)
    }

    static func date(_ time: FileTime) -> Date {
        Date(timeIntervalSince1970: Double(time.seconds) + Double(time.nanoseconds) / 1e9)
    }

    func attributes(_ inode: Inode, _ state: borrowing FileSystemState) throws(Errno) -> Attributes {
        let inode = state.aliases[inode] ?? inode
        let node: Node
        do {
            node = try self.node(inode, state)
        } catch {
            // An unlinked file still open: its bytes live on in memory.
            if let open = state.openFiles[inode] {
                return Attributes(
                    inode: inode, mode: S_IFREG | 0o644, linkCount: 0, uid: options.uid, gid: options.gid,
                    size: UInt64(open.content.count), accessTime: mountTime, modificationTime: mountTime, changeTime: mountTime)
            }
            throw error
        }
        switch node {
        case .root:
            return Attributes(
                inode: inode, mode: S_IFDIR | 0o755, linkCount: 2, uid: options.uid, gid: options.gid, size: 4096,
                accessTime: mountTime, modificationTime: mountTime, changeTime: mountTime)
        case .scratch(let file):
            return Attributes(
                inode: inode, mode: S_IFREG | (file.mode & 0o7777), uid: file.uid, gid: file.gid, size: UInt64(file.content.count),
                accessTime: file.modificationTime, modificationTime: file.modificationTime, changeTime: file.modificationTime)
        case .folder(let m), .note(let m), .attachment(let m):
            let isDirectory: Bool
            if case .folder = node { isDirectory = true } else { isDirectory = false }
            let record = m.record
            let permissions = record[MountFields.mode]?.int64Value.map { mode_t(truncatingIfNeeded: $0) & 0o7777 } ?? (isDirectory ? 0o755 : 0o644)
            var size: UInt64
            var time = Self.fileTime(m)
            if let open = state.openFiles[inode] {
                size = UInt64(open.content.count)
                if let pending = open.pendingModificationTime { time = pending }
            } else if case .note = node {
                size = UInt64(m.byteCount(of: "text") ?? 0)
            } else if case .attachment = node {
                size = UInt64(record["content"]?.assetValue?.size ?? 0)
            } else {
                size = 4096
            }
            if isDirectory { size = 4096 }
            return Attributes(
                inode: inode, mode: (isDirectory ? S_IFDIR : S_IFREG) | permissions, linkCount: isDirectory ? 2 : 1,
                uid: record[MountFields.uid]?.int64Value.map { uid_t(truncatingIfNeeded: $0) } ?? options.uid,
                gid: record[MountFields.gid]?.int64Value.map { gid_t(truncatingIfNeeded: $0) } ?? options.gid,
                size: size, accessTime: time, modificationTime: time, changeTime: time)
        }
    }

    func entry(_ inode: Inode, _ state: borrowing FileSystemState) throws(Errno) -> Entry {
        Entry(try attributes(inode, state), attributeTimeout: options.cacheTimeout, entryTimeout: options.cacheTimeout)
    }

    public func lookup(_ context: RequestContext, parent: Inode, name: FileName) throws(Errno) -> Entry {
        let string = try validName(name)
        return try locked { (state) throws(Errno) in
            let inode = try child(parent, string, &state)
            return try entry(inode, state)
        }
    }

    public func forget(_ inode: Inode, lookups: UInt64) {
        // Inodes are record identities, derived from the store: only a rename alias to free.
        _ = state.withLock { $0.aliases.removeValue(forKey: inode) }
    }

    public func getattr(_ context: RequestContext, inode: Inode, handle: UInt64?) throws(Errno) -> AttributesReply {
        try locked { (state) throws(Errno) in AttributesReply(try attributes(inode, state), timeout: options.cacheTimeout) }
    }

    public func setattr(_ context: RequestContext, inode: Inode, changes: SetAttributes) throws(Errno) -> AttributesReply {
        try locked { (state) throws in
            let node = try self.node(inode, state)
            if let size = changes.size {
                if case .folder = node { throw Errno.isDirectory }
                let open = try openFile(inode, &state)
                try open.content.truncate(Int(size))
                open.dirty = true
                if open.handles == 0 {
                    try save(inode, &state)
                    // No writer holds it (truncate by path): drop the buffer so that reads and
                    // later opens see the store.
                    state.openFiles[inode] = nil
                }
            }
            let time = changes.modificationTime.map { $0.resolved() }
            if case .scratch(let file) = node {
                if let mode = changes.mode { file.mode = mode }
                if let uid = changes.uid { file.uid = uid }
                if let gid = changes.gid { file.gid = gid }
                if let time {
                    file.modificationTime = time
                    file.modificationTimeWasSet = true
                }
            } else if let metadata = node.metadata {
                if let time, let open = state.openFiles[inode], open.dirty {
                    open.pendingModificationTime = time
                } else if changes.mode != nil || changes.uid != nil || changes.gid != nil || time != nil {
                    var record = try database.record(for: metadata.recordID)
                    if let mode = changes.mode { record[MountFields.mode] = .int64(Int64(mode & 0o7777)) }
                    if let uid = changes.uid { record[MountFields.uid] = .int64(Int64(uid)) }
                    if let gid = changes.gid { record[MountFields.gid] = .int64(Int64(gid)) }
                    if let time {
                        Self.setModificationTime(time, of: &record)
                    } else {
                        record.modificationDate = metadata.record.modificationDate
                    }
                    let saved = try database.modify(saving: [record]).savedRecords[0]
                    state.openFiles[inode]?.baseTag = saved.recordChangeTag
                    if options.synchronous { try database.sync() }
                }
            }
            return AttributesReply(try attributes(inode, state), timeout: options.cacheTimeout)
        }
    }

    static func setModificationTime(_ time: FileTime, of record: inout Record) {
        record.modificationDate = date(time)
        record[MountFields.modificationNanoseconds] = .int64(time.seconds * 1_000_000_000 + time.nanoseconds)
    }

    public func statfs(_ context: RequestContext, inode: Inode) throws(Errno) -> FilesystemStatistics {
        var stats = statvfs()
        guard statvfs(database.path, &stats) == 0 else { throw Errno.current }
        let files = UInt64(database.recordCount)
        return FilesystemStatistics(
            blockSize: UInt(stats.f_bsize), fragmentSize: UInt(stats.f_frsize), blocks: UInt64(stats.f_blocks),
            freeBlocks: UInt64(stats.f_bfree), availableBlocks: UInt64(stats.f_bavail), files: files + UInt64(stats.f_ffree),
            freeFiles: UInt64(stats.f_ffree), availableFiles: UInt64(stats.f_favail), maximumNameLength: 255)
    }
}

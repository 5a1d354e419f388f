import FUSE
import Foundation
import Notes
import RecordStore

/// Symlinks, FIFOs, sockets and devices: `Symlink` and `SpecialFile` records (a scratch name's
/// symlink, such as emacs' `.#x` lock link, stays in memory as a ``ScratchFile``). The kernel
/// resolves symlinks (and reports `ELOOP`), opens FIFOs and devices itself, and decides who may
/// make a device (`mknod` arrives only when allowed).
extension NotesFileSystem {
    /// The POSIX file type of a `SpecialFile` type.
    static func fileTypeBits(_ type: SpecialFile.FileType?) -> mode_t {
        switch type {
        case .fifo: S_IFIFO
        case .socket: S_IFSOCK
        case .character: S_IFCHR
        case .block: S_IFBLK
        case nil: S_IFREG  // refused by fsck; shown as an empty file
        }
    }

    /// The `SpecialFile` type of POSIX file type bits; nil for other types.
    static func specialFileType(_ mode: mode_t) -> SpecialFile.FileType? {
        switch mode & S_IFMT {
        case S_IFIFO: .fifo
        case S_IFSOCK: .socket
        case S_IFCHR: .character
        case S_IFBLK: .block
        default: nil
        }
    }

    /// Attributes of a `Symlink` or `SpecialFile` record.
    func nodeAttributes(_ inode: Inode, _ metadata: RecordMetadata) -> Attributes {
        let record = metadata.record
        let time = Self.fileTime(metadata)
        var mode: mode_t
        var size: UInt64 = 0
        var rdev: UInt64 = 0
        if metadata.recordType == Symlink.recordType {
            mode = S_IFLNK | 0o777
            size = UInt64(symlinkTarget(metadata).count)
        } else {
            let special = try? SpecialFile(record: record)
            mode = Self.fileTypeBits(special?.fileType) | (record[MountFields.mode]?.int64Value.map { mode_t(truncatingIfNeeded: $0) & 0o7777 } ?? 0o644)
            rdev = special?.rdev ?? 0
        }
        return Attributes(
            inode: inode, mode: mode, linkCount: 1,
            uid: record[MountFields.uid]?.int64Value.map { uid_t(truncatingIfNeeded: $0) } ?? options.uid,
            gid: record[MountFields.gid]?.int64Value.map { gid_t(truncatingIfNeeded: $0) } ?? options.gid,
            size: size, accessTime: time, modificationTime: time, changeTime: time, rdev: rdev)
    }

    /// Attributes of a scratch symlink.
    func nodeAttributes(_ file: ScratchFile) -> Attributes {
        Attributes(
            inode: file.inode, mode: S_IFLNK | 0o777, linkCount: 1, uid: file.uid, gid: file.gid,
            size: UInt64(file.symlinkTarget?.count ?? 0),
            accessTime: file.modificationTime, modificationTime: file.modificationTime, changeTime: file.modificationTime)
    }

    /// A symlink record's target (a large target is read from the record file).
    private func symlinkTarget(_ metadata: RecordMetadata) -> [UInt8] {
        if metadata.isLarge("target"), let record = try? database.record(for: metadata.recordID) {
            return (try? Symlink(record: record))?.target ?? []
        }
        return (try? Symlink(record: metadata.record))?.target ?? []
    }

    public func readlink(_ context: RequestContext, inode: Inode) throws(Errno) -> [UInt8] {
        try locked { (state) throws(Errno) in
            switch try node(inode, state) {
            case .symlink(let m): return symlinkTarget(m)
            case .scratch(let file):
                guard let target = file.symlinkTarget else { throw Errno.invalidArgument }
                return target
            default: throw Errno.invalidArgument
            }
        }
    }

    public func symlink(_ context: RequestContext, target: [UInt8], parent: Inode, name: FileName) throws(Errno) -> Entry {
        let string = try validName(name)
        guard !target.isEmpty, target.count < Int(PATH_MAX) else { throw target.isEmpty ? .noEntry : .nameTooLong }
        return try locked { (state) throws in
            let folder = try folderReference(parent, state)
            if try listing(parent, &state).names[string] != nil { throw Errno.exists }
            if ScratchNames.isScratch(string) {
                let file = ScratchFile(
                    inode: state.nextScratchInode, parent: parent, name: string,
                    content: ContentBuffer(spillDirectory: database.temporaryDirectoryPath), mode: 0o777, uid: context.uid,
                    gid: context.gid)
                file.symlinkTarget = target
                state.nextScratchInode += 1
                state.scratch[file.inode] = file
                state.listings[parent]?.upsert(file.inode, scratchMember(file))
                return try entry(file.inode, state)
            }
            var record = Symlink(name: EntryNames.name(fromFileName: string), target: target, folder: folder).record
            Self.setOwnership(mode: 0o777, context, of: &record)
            return try entry(try Self.inode(of: try saveOne(record)), state)
        }
    }

    /// `mknod` of a FIFO, socket or device: a `SpecialFile` record.
    func makeSpecialFile(
        _ context: RequestContext, parent: Inode, name: String, type: SpecialFile.FileType, mode: mode_t, rdev: UInt64
    ) throws(Errno) -> Entry {
        try locked { (state) throws in
            let folder = try folderReference(parent, state)
            if try listing(parent, &state).names[name] != nil { throw Errno.exists }
            let isDevice = type == .character || type == .block
            var record = SpecialFile(
                name: EntryNames.name(fromFileName: name), fileType: type, rdev: isDevice ? rdev : 0, folder: folder
            ).record
            Self.setOwnership(mode: mode & ~context.umask, context, of: &record)
            return try entry(try Self.inode(of: try saveOne(record)), state)
        }
    }

    private static func setOwnership(mode: mode_t, _ context: RequestContext, of record: inout Record) {
        record[MountFields.mode] = .int64(Int64(mode & 0o7777))
        record[MountFields.uid] = .int64(Int64(context.uid))
        record[MountFields.gid] = .int64(Int64(context.gid))
    }

    /// Rename where a symlink or special file is involved (called by `rename` once the target is
    /// known not to be a folder; a scratch target is already removed). When the source is one, the
    /// whole rename happens here (its record takes the new name and folder, a replaced record is
    /// deleted in the same modify) and true is returned. When only the target is one, it is deleted
    /// and false returned: the caller goes on as if the name were free.
    func renameNode(
        _ node: Node, inode: Inode, replacing existing: Node?, to target: String, in newParent: Inode, folder: RecordID?,
        _ state: inout FileSystemState
    ) throws -> Bool {
        let replaced: RecordID? = existing?.metadata?.recordID
        switch node {
        case .symlink(let m), .special(let m):
            var record = try database.record(for: m.recordID)
            record["name"] = .string(EntryNames.name(fromFileName: target))
            record.setFolder(folder)
            record.modificationDate = m.record.modificationDate
            _ = try saveOne(record, deleting: replaced.map { [$0] } ?? [])
            return true
        case .scratch(let file) where file.symlinkTarget != nil:
            if let replaced { try database.modify(deleting: [replaced]) }
            if ScratchNames.isScratch(target) {
                state.listings[file.parent]?.remove(file.inode)
                file.parent = newParent
                file.name = target
                state.listings[newParent]?.upsert(file.inode, scratchMember(file))
                return true
            }
            var record = Symlink(name: EntryNames.name(fromFileName: target), target: file.symlinkTarget ?? [], folder: folder).record
            record[MountFields.mode] = .int64(0o777)
            record[MountFields.uid] = .int64(Int64(file.uid))
            record[MountFields.gid] = .int64(Int64(file.gid))
            Self.setModificationTime(file.modificationTime, of: &record)
            let saved = try saveOne(record)
            try removeScratch(file, &state)
            let newInode = try Self.inode(of: saved)
            state.aliases[inode] = newInode
            outbox.withLock { $0 += [.entry(parent: newParent, name: target), .inode(newInode)] }
            outboxSignal.signal()
            return true
        default:
            switch existing {
            case .symlink(let m), .special(let m): try database.modify(deleting: [m.recordID])
            default: break
            }
            return false
        }
    }
}

extension Node {
    /// A note's or attachment's metadata (the records that hold bytes); nil for other nodes.
    var fileMetadata: RecordMetadata? {
        switch self {
        case .note(let m), .attachment(let m): m
        default: nil
        }
    }
}

extension Record {
    /// Sets the `folder` reference of a note, attachment, symlink or special file (nil: the root).
    mutating func setFolder(_ folder: RecordID?) {
        self["folder"] = folder.map { .reference(Reference(recordID: $0, action: .deleteSelf)) }
    }
}

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
    func nodeAttributes(_ inode: Inode, _ metadata: RecordMetadata, _ state: borrowing FileSystemState) -> Attributes {
        let times = times(inode, metadata, state)
        var mode: mode_t
        var size: UInt64 = 0
        var rdev: UInt64 = 0
        if metadata.recordType == Symlink.recordType {
            mode = S_IFLNK | 0o777
            size = UInt64(symlinkTarget(metadata).count)
        } else if metadata.recordType == Link.recordType {
            mode = S_IFREG  // a Link whose target is gone (fsck reports it): an empty file without permissions
        } else {
            let special = try? SpecialFile(record: metadata.record)
            mode =
                Self.fileTypeBits(special?.fileType)
                | (metadata.field(MountFields.mode)?.int64Value.map { mode_t(truncatingIfNeeded: $0) & 0o7777 } ?? 0o644)
            rdev = special?.rdev ?? 0
        }
        return Attributes(
            inode: inode, mode: mode, linkCount: linkCount(metadata),
            uid: metadata.field(MountFields.uid)?.int64Value.map { uid_t(truncatingIfNeeded: $0) } ?? options.uid,
            gid: metadata.field(MountFields.gid)?.int64Value.map { gid_t(truncatingIfNeeded: $0) } ?? options.gid,
            size: size, accessTime: times.access, modificationTime: times.modification, changeTime: times.change, rdev: rdev)
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
        if metadata.isLarge(FieldName.target), let record = try? database.record(for: metadata.recordID) {
            return (try? Symlink(record: record))?.target ?? []
        }
        return (try? Symlink(record: metadata.record))?.target ?? []
    }

    public func readlink(_ context: RequestContext, inode: Inode) throws(Errno) -> [UInt8] {
        if let target = try readVirtualLink(inode, caller: context) { return target }
        return try locked { (state) throws(Errno) in
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
        try refuseVirtualChange(in: parent)
        guard !target.isEmpty, target.count < Int(PATH_MAX) else { throw target.isEmpty ? .noEntry : .nameTooLong }
        return try locked { (state) throws in
            let folder = try folderReference(parent, state)
            try refuseNewEntry(in: parent, state)
            if try listing(parent, &state).names[string] != nil { throw Errno.exists }
            if ScratchNames.isScratch(string) {
                let file = ScratchFile(
                    inode: state.scratchFiles.nextInode, parent: parent, name: string,
                    content: ContentBuffer(spillDirectory: database.temporaryDirectoryPath), mode: 0o777, uid: context.uid,
                    gid: context.gid)
                file.symlinkTarget = target
                state.scratchFiles.nextInode += 1
                state.scratchFiles.files[file.inode] = file
                state.names.listings[parent]?.upsert(file.inode, scratchMember(file))
                return try entry(file.inode, state)
            }
            var record = Symlink(name: EntryNames.name(fromFileName: string), target: target, folder: folder).record
            Self.setOwnership(mode: 0o777, uid: context.uid, gid: context.gid, of: &record)
            return try entry(try Self.inode(of: try saveOne(record, touching: try touchedFolders([parent], &state))), state)
        }
    }

    /// `mknod` of a FIFO, socket or device: a `SpecialFile` record.
    func makeSpecialFile(
        _ context: RequestContext, parent: Inode, name: String, type: SpecialFile.FileType, mode: mode_t, rdev: UInt64
    ) throws(Errno) -> Entry {
        try locked { (state) throws in
            let folder = try folderReference(parent, state)
            try refuseNewEntry(in: parent, state)
            if try listing(parent, &state).names[name] != nil { throw Errno.exists }
            let isDevice = type == .character || type == .block
            var record = SpecialFile(
                name: EntryNames.name(fromFileName: name), fileType: type, rdev: isDevice ? rdev : 0, folder: folder
            ).record
            let (permissions, inherited) = newEntryAccess(mode, in: parent, directory: false, context, state)
            Self.setOwnership(mode: permissions, uid: context.uid, gid: context.gid, of: &record)
            inherited.write(into: &record)
            return try entry(try Self.inode(of: try saveOne(record, touching: try touchedFolders([parent], &state))), state)
        }
    }

    private static func setOwnership(mode: mode_t, uid: uid_t, gid: gid_t, of record: inout Record) {
        record[MountFields.mode] = .int64(Int64(mode & 0o7777))
        record[MountFields.uid] = .int64(Int64(uid))
        record[MountFields.gid] = .int64(Int64(gid))
    }

    /// Rename where a symlink, special file or hard link is involved (called by `rename` once the
    /// target is known not to be a folder; a scratch target is already removed). Returns true when
    /// the rename is done here: both names lead to the same inode (POSIX: nothing happens), or the
    /// source is a `Symlink`, `SpecialFile` or `Link` record (it takes the new name and folder; a
    /// replaced record is deleted in the same modify unless another name keeps it) or a scratch
    /// symlink. The node's ctime moves (a `Link`'s target's, the inode the name shows), and so do
    /// the mtime and ctime of `parent` and `newParent`, in the same modify.
    func renameNode(
        _ node: Node, inode: Inode, replacing existing: Node?, to target: String, in newParent: Inode, from parent: Inode,
        folder: RecordID?, _ state: inout FileSystemState
    ) throws -> Bool {
        if let existingID = existing?.metadata?.recordID, let sourceID = node.metadata?.recordID,
            linkedRecord(existingID) == linkedRecord(sourceID)
        {
            return true
        }
        switch node {
        case .symlink(let m), .special(let m), .link(let m):
            let freed = try release(existing, &state)
            var record: Record
            var stamped: [Record] = []
            if case .link = node {
                record = m.record  // partial: a metadata-only save; a Link's own times are not shown
                record.modificationDate = m.modificationDate
                stamped = linkTarget(of: m, &state).map { [$0] } ?? []
            } else {
                record = changeOnly(m, inode: inode, &state)
            }
            record[FieldName.name] = .string(EntryNames.name(fromFileName: target))
            record.setReference(FieldName.folder, to: folder)
            _ = try saveOne(
                record, deleting: freed.deleting, touching: freed.saving + stamped + (try touchedFolders([parent, newParent], &state)))
            return true
        case .scratch(let file) where file.symlinkTarget != nil:
            let freed = try release(existing, &state)
            if !freed.isEmpty { try database.modify(saving: freed.saving, deleting: freed.deleting) }
            if ScratchNames.isScratch(target) {
                state.names.listings[file.parent]?.remove(file.inode)
                file.parent = newParent
                file.name = target
                state.names.listings[newParent]?.upsert(file.inode, scratchMember(file))
                return true
            }
            var record = Symlink(name: EntryNames.name(fromFileName: target), target: file.symlinkTarget ?? [], folder: folder).record
            Self.setOwnership(mode: 0o777, uid: file.uid, gid: file.gid, of: &record)
            Self.setModificationTime(file.modificationTime, of: &record)
            let saved = try saveOne(record, touching: try touchedFolders([parent, newParent], &state))
            try removeScratch(file, &state)
            let newInode = try Self.inode(of: saved)
            state.names.aliases[inode] = newInode
            notifyKernel([.entry(parent: newParent, name: target), .inode(newInode)])
            return true
        default:
            return false
        }
    }

    /// The record a rename of a note, attachment or scratch file replaces in place (the atomic-save
    /// pattern): a plain note or attachment. Any other target name is freed first (a `Link`,
    /// `Symlink` or `SpecialFile` record deleted; a record with other names handed to one of them).
    func replaceable(_ existing: Node?, _ state: inout FileSystemState) throws -> RecordMetadata? {
        switch existing {
        case .note(let m), .attachment(let m):
            return try promoteLink(of: m, &state) ? nil : m
        default:
            let freed = try release(existing, &state)
            if !freed.isEmpty { try database.modify(saving: freed.saving, deleting: freed.deleting) }
            return nil
        }
    }

    /// What freeing a name takes, to commit with the change that frees it.
    struct FreedName {
        var deleting: [RecordID] = []
        /// A hard-linked record whose ctime moved because one of its names goes.
        var saving: [Record] = []
        var isEmpty: Bool { deleting.isEmpty && saving.isEmpty }
    }

    /// Frees a name a rename replaces: the record (or `Link`) to delete with the rename, and for a
    /// `Link` its target with a new ctime; nothing when another name (a hard link) took the record
    /// over (``promoteLink(of:touching:_:)`` committed that).
    private func release(_ existing: Node?, _ state: inout FileSystemState) throws -> FreedName {
        switch existing {
        case .link(let m): return FreedName(deleting: [m.recordID], saving: linkTarget(of: m, &state).map { [$0] } ?? [])
        case .note(let m), .attachment(let m), .symlink(let m), .special(let m):
            return try promoteLink(of: m, &state) ? FreedName() : FreedName(deleting: [m.recordID])
        default: return FreedName()
        }
    }

    /// `metadata`'s record for a save that changes no bytes (partial: a metadata-only save): its
    /// mtime kept, its ctime now (``stampChange(_:inode:_:)``). `inode` is the inode the kernel knows it by.
    func changeOnly(_ metadata: RecordMetadata, inode: Inode? = nil, _ state: inout FileSystemState) -> Record {
        var record = metadata.record
        record.modificationDate = metadata.modificationDate
        Self.stampChange(&record, inode: inode ?? metadata.identity, &state)
        return record
    }

    /// The record a `Link` names, with a new ctime (``changeOnly(_:inode:_:)``), to save in the
    /// modify that adds, renames or removes that link: its link count or a name changes. The
    /// kernel's cached attributes of it are dropped after the reply, so every other name shows
    /// the new ctime and link count at once. Nil when the target is gone.
    func linkTarget(of link: RecordMetadata, _ state: inout FileSystemState) -> Record? {
        guard let id = link.field(FieldName.target)?.referenceValue?.recordID, let target = database.metadata(for: id) else { return nil }
        notifyKernel([.attributes(target.identity)])
        return changeOnly(target, &state)
    }

    /// The record a name stands for: a `Link`'s target, else the record itself.
    private func linkedRecord(_ id: RecordID) -> RecordID {
        guard let metadata = database.metadata(for: id), metadata.recordType == Link.recordType,
            let target = metadata.field(FieldName.target)?.referenceValue?.recordID
        else { return id }
        return target
    }

    /// `st_nlink` of a record: 1 + its `Link` records.
    func linkCount(_ metadata: RecordMetadata) -> UInt32 {
        UInt32(clamping: 1 + links(to: metadata.recordID).count)
    }

    private func links(to id: RecordID) -> [RecordMetadata] {
        database.referrers(to: id, key: FieldName.target).filter { $0.recordType == Link.recordType }
    }

    /// When `metadata`'s name goes (unlink, rename over it) but other names remain, the record
    /// takes the earliest link's name and folder and that `Link` is deleted, in one modify, so the
    /// record (inode, bytes) lives on under its other names. A note prefers a link named `*.md`
    /// (and an attachment one that is not): a note left with only other names shows as `name.md`.
    /// Its ctime moves (its link count drops) and the kernel's cached attributes of it are dropped
    /// after the reply; `folders` (the directory the name left) are saved in the same modify.
    /// False when it has no other name.
    func promoteLink(of metadata: RecordMetadata, touching folders: [Record] = [], _ state: inout FileSystemState) throws -> Bool {
        let isNote = metadata.recordType == Note.recordType
        let earliest = links(to: metadata.recordID).min {
            func key(_ link: RecordMetadata) -> (Int, Date, String) {
                let fits = EntryNames.isNoteFileName(link.field(FieldName.name)?.stringValue ?? "") == isNote
                return (fits ? 0 : 1, link.creationDate ?? .distantPast, link.recordID.recordName)
            }
            return key($0) < key($1)
        }
        guard let earliest else { return false }
        let name = earliest.field(FieldName.name)?.stringValue ?? ""
        var record = changeOnly(metadata, &state)
        if metadata.recordType == Note.recordType {
            record[FieldName.title] = .string(EntryNames.isNoteFileName(name) ? EntryNames.title(fromFileName: name) : name)
        } else {
            record[FieldName.name] = .string(name)
        }
        record.setReference(FieldName.folder, to: earliest.field(FieldName.folder)?.referenceValue?.recordID)
        try database.modify(saving: [record] + folders, deleting: [earliest.recordID])
        notifyKernel([.attributes(metadata.identity)])
        return true
    }

    /// `link(2)`: a `Link` record naming a note, attachment, symlink or special file. A directory
    /// never arrives (the kernel refuses it); an editor scratch file, which has no record, gets
    /// `EPERM`.
    public func link(_ context: RequestContext, inode: Inode, newParent: Inode, newName: FileName) throws(Errno) -> Entry {
        let string = try validName(newName)
        try refuseVirtualChange(of: inode)
        try refuseVirtualChange(in: newParent)
        return try locked { (state) throws in
            let folder = try folderReference(newParent, state)
            try refuseNewEntry(in: newParent, state)
            try refuse(inode, ifFlagged: Self.lockedFlags, state)
            if try listing(newParent, &state).names[string] != nil { throw Errno.exists }
            if case .scratch(let file) = try node(inode, state), file.isUnnamed {
                return try name(file, string, in: newParent, &state)
            }
            let target: RecordMetadata
            switch try node(inode, state) {
            case .note(let m), .attachment(let m), .symlink(let m), .special(let m): target = m
            case .root, .recovered, .folder: throw Errno.permissionDenied
            case .scratch, .link: throw Errno.permissionDenied
            }
            // One modify: the new name, the file's ctime (its link count changed) and the directory's times.
            let file = changeOnly(target, inode: inode, &state)
            let link = Link(name: EntryNames.name(fromFileName: string), target: target.recordID, folder: folder).record
            let saved = try database.modify(saving: [link, file] + (try touchedFolders([newParent], &state)), deleting: []).savedRecords
            if let tag = saved.first(where: { $0.recordID == target.recordID })?.recordChangeTag {
                state.files.open[inode]?.baseTag = tag  // an open (maybe dirty) buffer saves on top of this
            }
            return try entry(inode, state)
        }
    }

    /// The POSIX type of a listed record, and for a `Link` the inode it shows.
    func nodeType(of metadata: RecordMetadata) -> (mode_t, Inode?) {
        switch metadata.recordType {
        case Symlink.recordType: return (S_IFLNK, nil)
        case SpecialFile.recordType: return (Self.fileTypeBits((try? SpecialFile(record: metadata.record))?.fileType), nil)
        case Link.recordType:
            guard let id = metadata.field(FieldName.target)?.referenceValue?.recordID, let target = database.metadata(for: id),
                target.recordType != Link.recordType, target.recordType != Folder.recordType
            else { return (S_IFREG, nil) }
            return (nodeType(of: target).0, target.identity)
        default: return (S_IFREG, nil)
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

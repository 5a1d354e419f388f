import FUSE
import Foundation
import Notes
import RecordStore

/// Inode flags (`lsattr`, `chattr`): append-only (`a`) and immutable (`i`) are honoured, no-dump
/// (`d`) and no-atime (`A`) are kept; any other flag is `EOPNOTSUPP`. They are kept in the file's
/// record (field `inodeFlags`), so they stay through renames and remounts. As on other Linux
/// filesystems only root sets or clears `a` and `i` (`EPERM` otherwise).
///
/// The kernel keeps no flags of a FUSE inode, so the daemon enforces them, here, on every path
/// that changes a file (each answers `EPERM`):
/// - immutable: a writable open, a write or `fallocate` through a descriptor opened before,
///   `truncate`, `chmod`, `chown`, explicit times, xattr changes, a new hard link, unlink,
///   rename, and in a directory: any new entry, removal or rename in it;
/// - append-only: a writable open without `O_APPEND` or with `O_TRUNC`, `truncate`, `chmod`,
///   `chown`, explicit times, xattr changes, a new hard link, unlink, rename; in a directory:
///   removal and rename out of it (new entries are allowed).
extension NotesFileSystem {
    static let keptFlags: InodeFlags = [.immutable, .appendOnly, .noDump, .noAccessTime]
    /// Flags only root may change.
    static let rootFlags: InodeFlags = [.immutable, .appendOnly]
    /// Both flags that forbid changing a file's metadata or name.
    static let lockedFlags: InodeFlags = [.immutable, .appendOnly]

    public func getFlags(_ context: RequestContext, inode: Inode) throws(Errno) -> InodeFlags {
        if isVirtualNode(inode) { return [] }
        return try locked { (state) throws in inodeFlags(inode, state) }
    }

    public func setFlags(_ context: RequestContext, inode: Inode, flags: InodeFlags) throws(Errno) {
        try refuseVirtualChange(of: inode)
        guard flags.isSubset(of: Self.keptFlags) else { throw .notSupported }
        try locked { (state) throws in
            guard let metadata = flaggedRecord(inode, state) else { throw Errno.notSupported }
            let old = Self.flags(of: metadata)
            if old == flags { return }
            if context.uid != 0, !old.symmetricDifference(flags).isDisjoint(with: Self.rootFlags) { throw Errno.permissionDenied }
            var record = changeOnly(metadata, &state)
            record[MountFields.inodeFlags] = flags.isEmpty ? nil : .int64(Int64(flags.rawValue))
            let saved = try saveOne(record)
            state.files.open[metadata.identity]?.baseTag = saved.recordChangeTag
            if options.synchronous { try database.sync() }
        }
    }

    /// The flags of `inode`'s file (a hard link's: its file's); none for what has no record.
    func inodeFlags(_ inode: Inode, _ state: borrowing FileSystemState) -> InodeFlags {
        flaggedRecord(inode, state).map(Self.flags) ?? []
    }

    /// Throws `EPERM` when `inode`'s file has any of `flags`.
    func refuse(_ inode: Inode, ifFlagged flags: InodeFlags, _ state: borrowing FileSystemState) throws(Errno) {
        if !inodeFlags(inode, state).isDisjoint(with: flags) { throw .permissionDenied }
    }

    /// Throws `EPERM` when an entry may not be added to directory `parent` (it is immutable).
    func refuseNewEntry(in parent: Inode, _ state: borrowing FileSystemState) throws(Errno) {
        try refuse(parent, ifFlagged: .immutable, state)
    }

    /// Throws `EPERM` when `child` may not leave directory `parent` (unlink, rmdir, rename): either
    /// is immutable or append-only.
    func refuseRemoval(of child: Inode, from parent: Inode, _ state: borrowing FileSystemState) throws(Errno) {
        try refuse(parent, ifFlagged: Self.lockedFlags, state)
        try refuse(child, ifFlagged: Self.lockedFlags, state)
    }

    /// Throws `EPERM` for a writable open that `inode`'s flags forbid.
    func refuseWritableOpen(_ inode: Inode, flags: Int32, _ state: borrowing FileSystemState) throws(Errno) {
        let flagged = inodeFlags(inode, state)
        if flagged.contains(.immutable) { throw .permissionDenied }
        if flagged.contains(.appendOnly), flags & O_APPEND == 0 || flags & O_TRUNC != 0 { throw .permissionDenied }
    }

    private func flaggedRecord(_ inode: Inode, _ state: borrowing FileSystemState) -> RecordMetadata? {
        (try? node(inode, state)).flatMap(fileRecord)
    }

    /// The record of the file `node` names: a hard link's target, else its own; nil for what has
    /// no record (the root, `Recovered`, editor scratch) or a link whose target is gone.
    func fileRecord(_ node: Node) -> RecordMetadata? {
        switch node {
        case .link(let link): link.field(FieldName.target)?.referenceValue.flatMap { database.metadata(for: $0.recordID) }
        case .folder(let m), .note(let m), .attachment(let m), .symlink(let m), .special(let m): m
        case .root, .recovered, .scratch: nil
        }
    }

    private static func flags(of metadata: RecordMetadata) -> InodeFlags {
        InodeFlags(rawValue: UInt32(truncatingIfNeeded: metadata.field(MountFields.inodeFlags)?.int64Value ?? 0)).intersection(keptFlags)
    }
}

import FUSE
import Foundation
import Notes
import RecordStore

/// Extended attributes.
///
/// - `user.notesfs.recordName`, `.changeTag`, `.creationDate`: read-only, computed from the record
///   (`EPERM` to set or remove), read by name and not listed.
/// - Every other name in `user.`, `trusted.` and `security.` is kept in the file's record
///   (``ExtendedAttributes``: any bytes, names up to 255 bytes, values up to 64 KiB), so it stays
///   through renames and saves, `cp -a`/`rsync -X` copy it, and sync carries it. The kernel checks
///   who may: read (write) permission for `user.` on regular files and directories, `CAP_SYS_ADMIN`
///   for `trusted.`. `trusted.` names are listed to root only, as on other filesystems. A file
///   still held in memory (a new file before its first save, editor scratch) keeps them with it,
///   and its first save writes them.
/// - `system.posix_acl_access` and `system.posix_acl_default` hold POSIX ACLs
///   (NotesFileSystem+ACL.swift), checked to be one.
/// - any other `system.` name and any other namespace is `EOPNOTSUPP`, answered without the state lock; so is a
///   `security.` name the file does not hold (a file with no SELinux label or capability). GNU
///   `ls -l` remembers a device whose `security.selinux` or `system.posix_acl_access` lookup said
///   `EOPNOTSUPP` and asks no more for any file on it, where `ENODATA` costs a round trip to the
///   daemon for every file listed.
extension NotesFileSystem {
    static let xattrNames = ["user.notesfs.recordName", "user.notesfs.changeTag", "user.notesfs.creationDate"]

    public func listxattr(_ context: RequestContext, inode: Inode) throws(Errno) -> [FileName] {
        if isVirtualNode(inode) { return [] }
        return try locked { (state) throws in
            // notesfs's own names are read by name, never listed: a copy out of the mount (`cp -a`,
            // `rsync -X`) would carry them to files they do not describe, and a copy in would try
            // to set or remove them (`EPERM`).
            try storedAttributes(try node(inode, state)).names.filter { context.uid == 0 || !$0.hasPrefix("trusted.") }
                .map { FileName($0) }
        }
    }

    public func getxattr(_ context: RequestContext, inode: Inode, name: FileName) throws(Errno) -> [UInt8] {
        guard let string = name.string, Self.isKeptNamespace(string) else { throw Errno.notSupported }
        if isVirtualNode(inode) { throw Errno.noAttribute }
        return try locked { (state) throws in
            let node = try node(inode, state)
            guard Self.xattrNames.contains(string) else {
                guard let value = try storedAttributes(node)[string] else {
                    // No label: what a filesystem without an LSM answers, so `ls -l` stops asking.
                    throw string.hasPrefix("security.") ? Errno.notSupported : Errno.noAttribute
                }
                return value
            }
            guard let metadata = node.metadata else { throw Errno.noAttribute }
            switch string {
            case "user.notesfs.recordName": return Array(metadata.recordID.recordName.utf8)
            case "user.notesfs.changeTag": return Array((metadata.recordChangeTag ?? "").utf8)
            default:
                // A damaged record may hold any double: clamp to years 1-9999 (NaN: 1970).
                let interval = metadata.creationDate?.timeIntervalSince1970 ?? 0
                let date = Date(timeIntervalSince1970: interval.isNaN ? 0 : min(max(interval, -62_135_596_800), 253_402_300_799))
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                return Array(formatter.string(from: date).utf8)
            }
        }
    }

    public func setxattr(_ context: RequestContext, inode: Inode, name: FileName, value: [UInt8], flags: XattrFlags) throws(Errno) {
        try refuseVirtualChange(of: inode)
        let string = try keptName(name)
        if string.hasPrefix("system."), AccessControlList(value) == nil { throw .invalidArgument }
        try changeAttributes(of: inode) { (attributes) throws(ExtendedAttributeError) in
            try attributes.set(string, to: value, mustExist: flags.contains(.replace), mustNotExist: flags.contains(.create))
        }
    }

    public func removexattr(_ context: RequestContext, inode: Inode, name: FileName) throws(Errno) {
        try refuseVirtualChange(of: inode)
        let string = try keptName(name)
        try changeAttributes(of: inode) { (attributes) throws(ExtendedAttributeError) in try attributes.remove(string) }
    }

    /// Whether `name` is in a namespace this filesystem keeps (`user.`, `trusted.`, `security.`).
    static func isKeptNamespace(_ name: String) -> Bool {
        name.hasPrefix("user.") || name.hasPrefix("trusted.") || name.hasPrefix("security.")
            || name == AccessControlList.accessName || name == AccessControlList.defaultName
    }

    /// `name` as a name that may be set or removed.
    /// - Throws: `EPERM` for notesfs's own names, `EOPNOTSUPP` for another namespace, `EINVAL` for
    ///   a name that is not UTF-8.
    private func keptName(_ name: FileName) throws(Errno) -> String {
        guard let string = name.string else {
            throw Self.isKeptNamespace(String(decoding: name.bytes, as: UTF8.self)) ? Errno.invalidArgument : Errno.notSupported
        }
        guard Self.isKeptNamespace(string) else { throw Errno.notSupported }
        if Self.xattrNames.contains(string) { throw Errno.permissionDenied }
        return string
    }

    /// The attributes `node`'s file keeps (a hard link's: its file's).
    private func storedAttributes(_ node: Node) throws -> ExtendedAttributes {
        if case .scratch(let file) = node { return file.extendedAttributes }
        return try fileRecord(node).map(storedAttributes(of:)) ?? ExtendedAttributes()
    }

    /// The attributes `metadata`'s record keeps, read from its file when the index leaves them out.
    func storedAttributes(of metadata: RecordMetadata) throws -> ExtendedAttributes {
        guard metadata.isLarge(ExtendedAttributes.fieldKey) else { return ExtendedAttributes(metadata.record) }
        return ExtendedAttributes(try database.record(for: metadata.recordID))
    }

    /// Applies `change` to the attributes of `inode`'s file and saves them (its ctime moves); a
    /// file held in memory keeps them until its first save.
    private func changeAttributes(
        of inode: Inode, _ change: (inout ExtendedAttributes) throws(ExtendedAttributeError) -> Void
    ) throws(Errno) {
        try locked { (state) throws in
            var node = try node(inode, state)
            if case .link = node {
                guard let target = fileRecord(node) else { throw Errno.noEntry }
                node = try self.node(target.identity, state)
            }
            try refuse(inode, ifFlagged: Self.lockedFlags, state)
            // An access ACL sets the permission bits it gives (the kernel checks the ACL only
            // while the group bits are not all clear).
            let aclBits = { (attributes: ExtendedAttributes) in
                attributes[AccessControlList.accessName].flatMap(AccessControlList.init)?.permissionBits
            }
            if case .scratch(let file) = node {
                try change(&file.extendedAttributes)
                if let bits = aclBits(file.extendedAttributes) { file.mode = (file.mode & ~0o777) | bits }
                return
            }
            guard let metadata = node.metadata else { throw Errno.notSupported }
            var attributes = try storedAttributes(of: metadata)
            let before = aclBits(attributes)
            try change(&attributes)
            var record = changeOnly(metadata, &state)
            attributes.write(into: &record)
            if let bits = aclBits(attributes), bits != before {
                let mode = mode_t(truncatingIfNeeded: metadata.field(MountFields.mode)?.int64Value ?? 0o644)
                record[MountFields.mode] = .int64(Int64((mode & 0o7000) | bits))
            }
            let saved = try saveOne(record)
            // A writer's next save builds on this change, not over it.
            state.files.open[metadata.identity]?.baseTag = saved.recordChangeTag
            if options.synchronous { try database.sync() }
        }
    }
}

import FUSE
import Foundation
import RecordStore

/// Read-only extended attributes: `user.notesfs.recordName`, `.changeTag`, `.creationDate`.
///
/// Only the `user.` namespace is supported: a name there that is not one of the three is
/// `ENODATA` (no such attribute), a `security.`, `system.` or `trusted.` name is `EOPNOTSUPP` (the
/// namespace is not supported: no SELinux label, POSIX ACL or capability can be stored, and
/// `setxattr` refuses them with the same error). That answer also lets `ls -l` stop asking: GNU
/// ls remembers a device whose `security.selinux` or `system.posix_acl_access` lookup said
/// `EOPNOTSUPP` and asks no more for any file on it, where `ENODATA` costs two round trips to the
/// daemon for every file listed (the kernel caches neither answer).
extension NotesFileSystem {
    static let xattrNames = ["user.notesfs.recordName", "user.notesfs.changeTag", "user.notesfs.creationDate"]

    public func listxattr(_ context: RequestContext, inode: Inode) throws(Errno) -> [FileName] {
        if isVirtualNode(inode) { return [] }
        return try locked { (state) throws in
            guard try node(inode, state).metadata != nil else { return [] }
            return Self.xattrNames.map { FileName($0) }
        }
    }

    public func getxattr(_ context: RequestContext, inode: Inode, name: FileName) throws(Errno) -> [UInt8] {
        // Every other name (ls -l asks for security.selinux, each write for security.capability)
        // is answered without the state lock: no record holds any other attribute.
        guard let string = name.string, Self.xattrNames.contains(string) else {
            throw Self.isSupportedNamespace(name) ? Errno.noAttribute : Errno.notSupported
        }
        if isVirtualNode(inode) { throw Errno.noAttribute }
        return try locked { (state) throws in
            guard let metadata = try node(inode, state).metadata else { throw Errno.noAttribute }
            switch name.string {
            case "user.notesfs.recordName": return Array(metadata.recordID.recordName.utf8)
            case "user.notesfs.changeTag": return Array((metadata.recordChangeTag ?? "").utf8)
            case "user.notesfs.creationDate":
                // A damaged record may hold any double: clamp to years 1-9999 (NaN: 1970).
                let interval = metadata.creationDate?.timeIntervalSince1970 ?? 0
                let date = Date(timeIntervalSince1970: interval.isNaN ? 0 : min(max(interval, -62_135_596_800), 253_402_300_799))
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                return Array(formatter.string(from: date).utf8)
            default: throw Errno.noAttribute
            }
        }
    }

    public func setxattr(_ context: RequestContext, inode: Inode, name: FileName, value: [UInt8], flags: XattrFlags) throws(Errno) {
        try refuseVirtualChange(of: inode)
        if let string = name.string, Self.xattrNames.contains(string) { throw .permissionDenied }
        throw .notSupported
    }

    public func removexattr(_ context: RequestContext, inode: Inode, name: FileName) throws(Errno) {
        try refuseVirtualChange(of: inode)
        if let string = name.string, Self.xattrNames.contains(string) { throw .permissionDenied }
        throw Self.isSupportedNamespace(name) ? Errno.noAttribute : Errno.notSupported
    }

    /// Whether `name` is in the `user.` namespace, the only one this filesystem keeps.
    static func isSupportedNamespace(_ name: FileName) -> Bool {
        name.bytes.starts(with: "user.".utf8)
    }
}

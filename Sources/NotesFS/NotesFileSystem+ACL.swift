import FUSE
import Foundation
import Notes
import RecordStore

/// POSIX ACLs: kept as the `system.posix_acl_access` and `system.posix_acl_default` attributes
/// (``AccessControlList``), enforced by the kernel (`FUSE_CAP_POSIX_ACL`). The kernel then leaves
/// the umask to the filesystem, which applies it only where the directory has no default ACL:
/// a new file or directory in one that has gets the access ACL it says (and a directory its
/// default ACL too); a `chmod` moves the access ACL's owner, group-class and other entries with it.
extension NotesFileSystem {
    /// The permission bits and attributes a new file (`directory`: a new directory) created in
    /// `parent` with `mode` by `context` starts with.
    func newEntryAccess(
        _ mode: mode_t, in parent: Inode, directory: Bool, _ context: RequestContext, _ state: borrowing FileSystemState
    ) -> (permissions: mode_t, attributes: ExtendedAttributes) {
        var attributes = ExtendedAttributes()
        guard let inherited = defaultACL(of: parent, state) else { return (mode & ~context.umask & 0o7777, attributes) }
        let (access, permissions) = inherited.created(mode: mode & 0o7777)
        try? attributes.set(AccessControlList.accessName, to: access.bytes)
        if directory { try? attributes.set(AccessControlList.defaultName, to: inherited.bytes) }
        return (permissions, attributes)
    }

    /// `record`'s access ACL, if it has one, after a `chmod` to `mode` (written into `record`).
    func changeACLMode(of metadata: RecordMetadata, to mode: mode_t, in record: inout Record) throws {
        var attributes = try storedAttributes(of: metadata)
        guard let bytes = attributes[AccessControlList.accessName], let acl = AccessControlList(bytes) else { return }
        try? attributes.set(AccessControlList.accessName, to: acl.changingMode(to: mode).bytes)
        attributes.write(into: &record)
    }

    /// The default ACL of directory `parent`; nil for none (and for the root and `Recovered`).
    private func defaultACL(of parent: Inode, _ state: borrowing FileSystemState) -> AccessControlList? {
        guard case .folder(let metadata)? = try? node(parent, state),
            let bytes = try? storedAttributes(of: metadata)[AccessControlList.defaultName]
        else { return nil }
        return AccessControlList(bytes)
    }
}

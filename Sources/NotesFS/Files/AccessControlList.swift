import Glibc

/// A POSIX ACL in the kernel's xattr form (`system.posix_acl_access`, `system.posix_acl_default`):
/// a little-endian header (version 2), then 8-byte entries: tag (u16), permissions (u16), id (u32).
///
/// The kernel enforces ACLs itself (`FUSE_CAP_POSIX_ACL`, with `default_permissions`); the
/// filesystem stores them, keeps an access ACL in step with `chmod`, and gives a new file or
/// directory the ACL its directory's default ACL says, as `posix_acl_create` and
/// `posix_acl_chmod` do in the kernel for local filesystems.
struct AccessControlList: Equatable {
    static let accessName = "system.posix_acl_access"
    static let defaultName = "system.posix_acl_default"
    static let version: UInt32 = 2

    enum Tag: UInt16 {
        case userObject = 0x01, user = 0x02, groupObject = 0x04, group = 0x08, mask = 0x10, other = 0x20
    }

    struct Entry: Equatable {
        var tag: UInt16
        var permissions: UInt16
        var id: UInt32
    }

    var entries: [Entry]

    /// Reads the xattr form; nil when it is not one (wrong version, a size that is not 4 + 8n,
    /// an unknown tag, permissions beyond rwx, or without the three entries every ACL has).
    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 4, (bytes.count - 4) % 8 == 0, bytes.count <= 4 + 8 * 1024, Self.uint32(bytes, 0) == Self.version else {
            return nil
        }
        entries = stride(from: 4, to: bytes.count, by: 8).map { offset in
            Entry(tag: Self.uint16(bytes, offset), permissions: Self.uint16(bytes, offset + 2), id: Self.uint32(bytes, offset + 4))
        }
        let tags = entries.map(\.tag)
        guard entries.allSatisfy({ Tag(rawValue: $0.tag) != nil && $0.permissions & ~7 == 0 }),
            [Tag.userObject, .groupObject, .other].allSatisfy({ tag in tags.count { $0 == tag.rawValue } == 1 })
        else { return nil }
    }

    /// The xattr form.
    var bytes: [UInt8] {
        var result = Self.littleEndian(Self.version)
        for entry in entries {
            result += Self.littleEndian(UInt32(entry.tag) | UInt32(entry.permissions) << 16) + Self.littleEndian(entry.id)
        }
        return result
    }

    /// The access ACL and permission bits of a new file whose directory has this default ACL and
    /// whose creator asked for `mode` (`posix_acl_create_masq`: each class keeps what both allow).
    func created(mode: mode_t) -> (acl: AccessControlList, mode: mode_t) {
        var acl = self
        var bits = mode & 0o777
        for index in acl.entries.indices {
            switch Tag(rawValue: acl.entries[index].tag) {
            case .userObject:
                acl.entries[index].permissions &= UInt16((bits >> 6) & 7)
                bits &= mode_t(acl.entries[index].permissions) << 6 | ~mode_t(0o700)
            case .other:
                acl.entries[index].permissions &= UInt16(bits & 7)
                bits &= mode_t(acl.entries[index].permissions) | ~mode_t(0o007)
            default: break
            }
        }
        // The group class is the mask when there is one, else the owning group.
        if let index = acl.entries.firstIndex(where: { $0.tag == Tag.mask.rawValue })
            ?? acl.entries.firstIndex(where: { $0.tag == Tag.groupObject.rawValue })
        {
            acl.entries[index].permissions &= UInt16((bits >> 3) & 7)
            bits &= mode_t(acl.entries[index].permissions) << 3 | ~mode_t(0o070)
        }
        return (acl, (mode & ~0o777) | (bits & 0o777))
    }

    /// The permission bits this access ACL gives (`posix_acl_update_mode`): the owner's, the group
    /// class's (the mask when there is one) and the others'; setting an access ACL sets them.
    var permissionBits: mode_t {
        func bits(_ tag: Tag) -> mode_t? { entries.first { $0.tag == tag.rawValue }.map { mode_t($0.permissions) } }
        let group = bits(.mask) ?? bits(.groupObject) ?? 0
        return (bits(.userObject) ?? 0) << 6 | group << 3 | (bits(.other) ?? 0)
    }

    /// This access ACL after `chmod(mode)` (`posix_acl_chmod_masq`): the owner, group class (the
    /// mask when there is one) and others take the new bits; named entries stay.
    func changingMode(to mode: mode_t) -> AccessControlList {
        var acl = self
        let hasMask = entries.contains { $0.tag == Tag.mask.rawValue }
        for index in acl.entries.indices {
            switch Tag(rawValue: acl.entries[index].tag) {
            case .userObject: acl.entries[index].permissions = UInt16((mode >> 6) & 7)
            case .other: acl.entries[index].permissions = UInt16(mode & 7)
            case .mask: acl.entries[index].permissions = UInt16((mode >> 3) & 7)
            case .groupObject where !hasMask: acl.entries[index].permissions = UInt16((mode >> 3) & 7)
            default: break
            }
        }
        return acl
    }

    private static func uint16(_ bytes: [UInt8], _ offset: Int) -> UInt16 { UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8 }
    private static func uint32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
    }
    private static func littleEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) } }
}

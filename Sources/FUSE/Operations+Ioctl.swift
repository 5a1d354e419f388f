/// The `ioctl` trampoline: only the inode flags, as the kernel asks for them for `lsattr`/`chattr`
/// (`FS_IOC_GETFLAGS`/`SETFLAGS` with a 4-byte `int`, or the `long` of the raw ioctl, and
/// `FS_IOC_FSGETXATTR`/`FSSETXATTR` with a `struct fsxattr`, whose `fsx_xflags` carry the same
/// flags under other bits); every other command is `ENOTTY`, as for a file that knows no such ioctl.

import CFuse
import Glibc

extension Operations {
    /// `FS_IOC_GETFLAGS` (`_IOR('f', 1, long)`) and `FS_IOC_SETFLAGS` (`_IOW('f', 2, long)`).
    static let getFlagsCommand: UInt32 = 0x8008_6601
    static let setFlagsCommand: UInt32 = 0x4008_6602
    /// `FS_IOC_FSGETXATTR` and `FS_IOC_FSSETXATTR`, with a 28-byte `struct fsxattr`.
    static let getExtendedFlagsCommand: UInt32 = 0x801C_581F
    static let setExtendedFlagsCommand: UInt32 = 0x401C_5820
    static let fsxattrSize = 28
    /// `FS_XFLAG_*` ↔ `FS_*_FL`.
    static let extendedFlags: [(xflag: UInt32, flag: InodeFlags)] = [
        (0x08, .immutable), (0x10, .appendOnly), (0x40, .noAccessTime), (0x80, .noDump),
    ]

    static func ioctl(
        _ request: fuse_req_t, _ inode: fuse_ino_t, _ command: UInt32, _ flags: UInt32, _ inBuffer: UnsafeRawPointer?,
        _ inSize: Int, _ outSize: Int
    ) {
        respond(request) { (fileSystem, context) throws(Errno) -> [UInt8] in
            if flags & UInt32(FUSE_IOCTL_COMPAT) != 0 { throw Errno(rawValue: ENOSYS) }
            switch command {
            case getFlagsCommand where outSize == 4 || outSize == 8:
                return LittleEndian.bytes(try fileSystem.getFlags(context, inode: inode).rawValue, size: outSize)
            case setFlagsCommand where inSize == 4 || inSize == 8:
                guard let inBuffer else { throw Errno.invalidArgument }
                let raw = LittleEndian.load(UInt32.self, UnsafeRawBufferPointer(start: inBuffer, count: inSize), at: 0)
                try fileSystem.setFlags(context, inode: inode, flags: InodeFlags(rawValue: raw))
                return []
            case getExtendedFlagsCommand where outSize == fsxattrSize:
                let flags = try fileSystem.getFlags(context, inode: inode)
                let xflags = extendedFlags.filter { flags.contains($0.flag) }.reduce(UInt32(0)) { $0 | $1.xflag }
                return LittleEndian.bytes(xflags, size: fsxattrSize)  // fsx_xflags, the rest zero
            case setExtendedFlagsCommand where inSize == fsxattrSize:
                guard let inBuffer else { throw Errno.invalidArgument }
                let xflags = LittleEndian.load(UInt32.self, UnsafeRawBufferPointer(start: inBuffer, count: inSize), at: 0)
                let known = extendedFlags.reduce(UInt32(0)) { $0 | $1.xflag }
                guard xflags & ~known == 0 else { throw Errno.notSupported }
                let flags = extendedFlags.filter { xflags & $0.xflag != 0 }.reduce(InodeFlags()) { $0.union($1.flag) }
                // The flags this interface cannot express (none here) are kept as they are.
                try fileSystem.setFlags(context, inode: inode, flags: flags)
                return []
            default:
                throw Errno(rawValue: ENOTTY)
            }
        } send: { reply, bytes, _ in
            reply.ioctl(bytes)
        }
    }
}

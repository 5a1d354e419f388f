/// `Attributes`: a file's metadata as the filesystem reports it; converted to `struct stat` here only.

import Glibc

/// The inode number type of the low-level API (`fuse_ino_t`). The root directory is inode 1.
public typealias Inode = UInt64

/// File metadata (the fields of `struct stat` that FUSE forwards).
public struct Attributes: Hashable, Sendable {
    /// The root directory's inode number (`FUSE_ROOT_ID`).
    public static let rootInode: Inode = 1

    public var inode: Inode
    /// File type and permission bits, e.g. `S_IFREG | 0o644`.
    public var mode: mode_t
    public var linkCount: UInt32
    public var uid: uid_t
    public var gid: gid_t
    public var size: UInt64
    /// Allocated 512-byte blocks; nil means "computed from `size`".
    public var blocks: UInt64?
    public var accessTime: FileTime
    public var modificationTime: FileTime
    public var changeTime: FileTime
    public var rdev: UInt64
    /// Preferred I/O block size.
    public var blockSize: UInt32

    public init(
        inode: Inode, mode: mode_t, linkCount: UInt32 = 1, uid: uid_t = 0, gid: gid_t = 0,
        size: UInt64 = 0, blocks: UInt64? = nil, accessTime: FileTime = FileTime(seconds: 0),
        modificationTime: FileTime = FileTime(seconds: 0), changeTime: FileTime = FileTime(seconds: 0),
        rdev: UInt64 = 0, blockSize: UInt32 = 4096
    ) {
        self.inode = inode
        self.mode = mode
        self.linkCount = linkCount
        self.uid = uid
        self.gid = gid
        self.size = size
        self.blocks = blocks
        self.accessTime = accessTime
        self.modificationTime = modificationTime
        self.changeTime = changeTime
        self.rdev = rdev
        self.blockSize = blockSize
    }

    /// The 512-byte blocks `size` bytes take when every byte is stored: `size` rounded up.
    public static func blocks(forSize size: UInt64) -> UInt64 {
        size / 512 + (size % 512 == 0 ? 0 : 1)
    }

    /// True when `mode` says directory.
    public var isDirectory: Bool { mode & S_IFMT == S_IFDIR }

    /// The C `struct stat` FUSE replies carry.
    var stat: Glibc.stat {
        var st = Glibc.stat()
        st.st_ino = ino_t(inode)
        st.st_mode = mode
        st.st_nlink = nlink_t(linkCount)
        st.st_uid = uid
        st.st_gid = gid
        st.st_size = off_t(clamping: size)
        st.st_blocks = blkcnt_t(clamping: blocks ?? Self.blocks(forSize: size))
        st.st_blksize = blksize_t(blockSize)
        st.st_atim = accessTime.timespec
        st.st_mtim = modificationTime.timespec
        st.st_ctim = changeTime.timespec
        st.st_rdev = dev_t(rdev)
        return st
    }
}

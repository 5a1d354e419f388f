/// `FilesystemStatistics`: the statfs reply (`struct statvfs`).

import Glibc

/// Filesystem-wide numbers for `statfs`/`df`.
public struct FilesystemStatistics: Hashable, Sendable {
    public var blockSize: UInt
    public var fragmentSize: UInt
    public var blocks: UInt64
    public var freeBlocks: UInt64
    public var availableBlocks: UInt64
    public var files: UInt64
    public var freeFiles: UInt64
    public var availableFiles: UInt64
    public var maximumNameLength: UInt

    public init(
        blockSize: UInt = 4096, fragmentSize: UInt? = nil, blocks: UInt64 = 0, freeBlocks: UInt64 = 0,
        availableBlocks: UInt64? = nil, files: UInt64 = 0, freeFiles: UInt64 = 0,
        availableFiles: UInt64? = nil, maximumNameLength: UInt = 255
    ) {
        self.blockSize = blockSize
        self.fragmentSize = fragmentSize ?? blockSize
        self.blocks = blocks
        self.freeBlocks = freeBlocks
        self.availableBlocks = availableBlocks ?? freeBlocks
        self.files = files
        self.freeFiles = freeFiles
        self.availableFiles = availableFiles ?? freeFiles
        self.maximumNameLength = maximumNameLength
    }

    var statvfs: Glibc.statvfs {
        var st = Glibc.statvfs()
        st.f_bsize = blockSize
        st.f_frsize = fragmentSize
        st.f_blocks = fsblkcnt_t(blocks)
        st.f_bfree = fsblkcnt_t(freeBlocks)
        st.f_bavail = fsblkcnt_t(availableBlocks)
        st.f_files = fsfilcnt_t(files)
        st.f_ffree = fsfilcnt_t(freeFiles)
        st.f_favail = fsfilcnt_t(availableFiles)
        st.f_namemax = maximumNameLength
        return st
    }
}

/// `Opened`: the reply to open, create and opendir (a file handle and caching flags).

import CFuse

/// An open file or directory: the handle the kernel passes back on every later call, plus flags.
public struct Opened: Hashable, Sendable {
    /// The filesystem's handle (`fi->fh`); later calls receive it as `handle`.
    public var handle: UInt64
    /// Bypass the page cache for this open file (`direct_io`).
    public var directIO: Bool
    /// Keep cached pages from earlier opens (`keep_cache`); only when content has not changed.
    public var keepCache: Bool
    /// The file does not support seeking (`nonseekable`).
    public var nonSeekable: Bool
    /// For opendir: let the kernel cache readdir results (`cache_readdir`).
    public var cacheDirectory: Bool
    /// Do not send `flush` when this open file is closed (`noflush`); for read-only opens of a
    /// filesystem that only saves on flush, it saves a round trip per close.
    public var noFlush: Bool = false

    public init(
        handle: UInt64 = 0, directIO: Bool = false, keepCache: Bool = false,
        nonSeekable: Bool = false, cacheDirectory: Bool = false
    ) {
        self.handle = handle
        self.directIO = directIO
        self.keepCache = keepCache
        self.nonSeekable = nonSeekable
        self.cacheDirectory = cacheDirectory
    }

    /// Writes the handle and flags into libfuse's `fuse_file_info`.
    func store(in info: inout fuse_file_info) {
        info.fh = handle
        info.direct_io = directIO ? 1 : 0
        info.keep_cache = keepCache ? 1 : 0
        info.nonseekable = nonSeekable ? 1 : 0
        info.cache_readdir = cacheDirectory ? 1 : 0
        info.noflush = noFlush ? 1 : 0
    }
}

/// `ConnectionInfo` and `Capabilities`: what the kernel offers at init and what the filesystem wants.

import CFuse

/// `FUSE_CAP_*` bits of `fuse_conn_info.capable` / `.want`.
public struct Capabilities: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let asyncRead = Capabilities(rawValue: UInt32(FUSE_CAP_ASYNC_READ))
    public static let posixLocks = Capabilities(rawValue: UInt32(FUSE_CAP_POSIX_LOCKS))
    /// open receives `O_TRUNC` instead of a separate setattr(size: 0). Off by default here.
    public static let atomicOTrunc = Capabilities(rawValue: UInt32(FUSE_CAP_ATOMIC_O_TRUNC))
    public static let exportSupport = Capabilities(rawValue: UInt32(FUSE_CAP_EXPORT_SUPPORT))
    public static let dontMask = Capabilities(rawValue: UInt32(FUSE_CAP_DONT_MASK))
    public static let flockLocks = Capabilities(rawValue: UInt32(FUSE_CAP_FLOCK_LOCKS))
    public static let autoInvalidateData = Capabilities(rawValue: UInt32(FUSE_CAP_AUTO_INVAL_DATA))
    public static let readdirplus = Capabilities(rawValue: UInt32(FUSE_CAP_READDIRPLUS))
    public static let readdirplusAuto = Capabilities(rawValue: UInt32(FUSE_CAP_READDIRPLUS_AUTO))
    public static let asyncDirectIO = Capabilities(rawValue: UInt32(FUSE_CAP_ASYNC_DIO))
    /// Kernel-side write caching. Off here: the filesystem must see every write.
    public static let writebackCache = Capabilities(rawValue: UInt32(FUSE_CAP_WRITEBACK_CACHE))
    public static let parallelDirectoryOperations = Capabilities(rawValue: UInt32(FUSE_CAP_PARALLEL_DIROPS))
    public static let posixACL = Capabilities(rawValue: UInt32(FUSE_CAP_POSIX_ACL))
    public static let handleKillPrivileges = Capabilities(rawValue: UInt32(FUSE_CAP_HANDLE_KILLPRIV))
    public static let cacheSymlinks = Capabilities(rawValue: UInt32(FUSE_CAP_CACHE_SYMLINKS))
    public static let explicitInvalidateData = Capabilities(rawValue: UInt32(FUSE_CAP_EXPLICIT_INVAL_DATA))
}

/// The negotiated connection, shown to `FileSystem.initialize` which may change `want` and limits.
///
/// Defaults set by this module before the filesystem sees it: `readdirplus` and `readdirplusAuto`
/// on when `FileSystem.implementsReaddirplus` (the kernel uses readdirplus for the first page of a listing and when it sees `ls -l` style
/// lookups), `writebackCache` off, `atomicOTrunc` off (truncation arrives as setattr(size: 0)),
/// `maxRead` from `-o max_read=` when given.
public struct ConnectionInfo: Hashable, Sendable {
    public var protocolMajor: UInt32
    public var protocolMinor: UInt32
    /// What the kernel and libfuse support (read-only).
    public let capable: Capabilities
    /// What this session uses; masked with `capable` after `initialize`.
    public var want: Capabilities
    public var maxWrite: UInt32
    public var maxRead: UInt32
    public var maxReadahead: UInt32
    /// Timestamp granularity in nanoseconds (1 = full nanoseconds).
    public var timeGranularity: UInt32

    init(_ conn: fuse_conn_info) {
        protocolMajor = conn.proto_major
        protocolMinor = conn.proto_minor
        capable = Capabilities(rawValue: conn.capable)
        want = Capabilities(rawValue: conn.want)
        maxWrite = conn.max_write
        maxRead = conn.max_read
        maxReadahead = conn.max_readahead
        timeGranularity = conn.time_gran
    }

    /// Writes the changeable fields back.
    func store(in conn: inout fuse_conn_info) {
        conn.want = want.rawValue & conn.capable
        conn.max_write = maxWrite
        conn.max_read = maxRead
        conn.max_readahead = maxReadahead
        conn.time_gran = timeGranularity
    }
}

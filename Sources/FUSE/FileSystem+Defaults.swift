/// Default implementations of `FileSystem`, so a filesystem implements only what it needs.

import Glibc

extension FileSystem {
    public var implementsReaddirplus: Bool { false }
    public func initialize(connection: inout ConnectionInfo, notifier: Notifier) {}
    public func destroy() {}
    public func forget(_ inode: Inode, lookups: UInt64) {}
    public func forget(_ items: [(inode: Inode, lookups: UInt64)]) {
        for item in items { forget(item.inode, lookups: item.lookups) }
    }
    public func setattr(_ context: RequestContext, inode: Inode, changes: SetAttributes) throws(Errno) -> AttributesReply {
        throw .permissionDenied
    }
    public func readlink(_ context: RequestContext, inode: Inode) throws(Errno) -> [UInt8] {
        throw .notImplemented
    }
    public func mknod(_ context: RequestContext, parent: Inode, name: FileName, mode: mode_t, rdev: UInt64) throws(Errno) -> Entry {
        throw .permissionDenied
    }
    public func mkdir(_ context: RequestContext, parent: Inode, name: FileName, mode: mode_t) throws(Errno) -> Entry {
        throw .permissionDenied
    }
    public func unlink(_ context: RequestContext, parent: Inode, name: FileName) throws(Errno) {
        throw .permissionDenied
    }
    public func rmdir(_ context: RequestContext, parent: Inode, name: FileName) throws(Errno) {
        throw .permissionDenied
    }
    public func symlink(_ context: RequestContext, target: [UInt8], parent: Inode, name: FileName) throws(Errno) -> Entry {
        throw .permissionDenied
    }
    public func rename(
        _ context: RequestContext, parent: Inode, name: FileName, newParent: Inode, newName: FileName,
        flags: RenameFlags
    ) throws(Errno) {
        throw .permissionDenied
    }
    public func link(_ context: RequestContext, inode: Inode, newParent: Inode, newName: FileName) throws(Errno) -> Entry {
        throw .permissionDenied
    }
    public func open(_ context: RequestContext, inode: Inode, flags: Int32) throws(Errno) -> Opened {
        Opened()
    }
    public func read(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, size: Int) throws(Errno) -> [UInt8] {
        throw .notImplemented
    }
    public func write(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, data: UnsafeRawBufferPointer, flags: Int32)
        throws(Errno) -> Int
    {
        throw .notImplemented
    }
    public func flush(_ context: RequestContext, inode: Inode, handle: UInt64) throws(Errno) {}
    public func release(_ context: RequestContext, inode: Inode, handle: UInt64, flags: Int32) throws(Errno) {}
    public func fsync(_ context: RequestContext, inode: Inode, handle: UInt64, dataOnly: Bool) throws(Errno) {}
    public func fallocate(_ context: RequestContext, inode: Inode, handle: UInt64, mode: AllocateMode, offset: Int64, length: Int64)
        throws(Errno)
    {
        throw .notSupported
    }
    public func opendir(_ context: RequestContext, inode: Inode, flags: Int32) throws(Errno) -> Opened {
        Opened()
    }
    public func readdir(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, into buffer: DirectoryBuffer) throws(Errno)
    {
        throw .notImplemented
    }
    /// Default: `ENOSYS`; never called unless `implementsReaddirplus` is true.
    public func readdirplus(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, into buffer: DirectoryPlusBuffer)
        throws(Errno)
    {
        throw .notImplemented
    }
    public func releasedir(_ context: RequestContext, inode: Inode, handle: UInt64) throws(Errno) {}
    public func fsyncdir(_ context: RequestContext, inode: Inode, handle: UInt64, dataOnly: Bool) throws(Errno) {}
    public func statfs(_ context: RequestContext, inode: Inode) throws(Errno) -> FilesystemStatistics {
        FilesystemStatistics()
    }
    public func setxattr(_ context: RequestContext, inode: Inode, name: FileName, value: [UInt8], flags: XattrFlags) throws(Errno) {
        throw .notImplemented
    }
    public func getxattr(_ context: RequestContext, inode: Inode, name: FileName) throws(Errno) -> [UInt8] {
        throw .notImplemented
    }
    public func listxattr(_ context: RequestContext, inode: Inode) throws(Errno) -> [FileName] {
        throw .notImplemented
    }
    public func removexattr(_ context: RequestContext, inode: Inode, name: FileName) throws(Errno) {
        throw .notImplemented
    }
    public func access(_ context: RequestContext, inode: Inode, mask: Int32) throws(Errno) {}
    public func tmpfile(_ context: RequestContext, parent: Inode, mode: mode_t, flags: Int32) throws(Errno) -> (Entry, Opened) {
        throw .notImplemented
    }
    public func getFlags(_ context: RequestContext, inode: Inode) throws(Errno) -> InodeFlags { throw Errno(rawValue: ENOTTY) }
    public func setFlags(_ context: RequestContext, inode: Inode, flags: InodeFlags) throws(Errno) { throw Errno(rawValue: ENOTTY) }
    public func create(_ context: RequestContext, parent: Inode, name: FileName, mode: mode_t, flags: Int32) throws(Errno) -> (
        Entry, Opened
    ) {
        throw .notImplemented
    }
}

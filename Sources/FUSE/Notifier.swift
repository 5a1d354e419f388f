/// `Notifier`: kernel cache invalidation (`fuse_lowlevel_notify_*`), callable from any thread.

import CFuse
import Glibc
import Synchronization

/// Sends cache invalidations to the kernel for one session.
///
/// Call it from a thread that is not handling a request, and not while holding a lock a request
/// handler may wait for: the kernel may wait for running requests on the same inode before it
/// answers. Invalidating something the kernel does not cache is not an error (`ENOENT` is ignored).
/// Before the session is mounted and after it is destroyed, calls throw `.notConnected`; after
/// the mount but before the kernel's INIT was handled, libfuse answers `.notImplemented`.
public final class Notifier: Sendable {
    /// The `fuse_session *` as bits (an `OpaquePointer` is not `Sendable`); nil when not attached.
    /// Notifications hold this lock so that the session cannot be destroyed under them.
    private let session = Mutex<UInt?>(nil)

    init() {}

    func attach(_ pointer: OpaquePointer) { session.withLock { $0 = UInt(bitPattern: pointer) } }

    func detach() { session.withLock { $0 = nil } }

    /// Drops the kernel's cached `name` → inode entry in `parent` (`fuse_lowlevel_notify_inval_entry`).
    /// - Throws: `Errno` from the kernel, `.notConnected` without a session.
    public func invalidateEntry(parent: Inode, name: FileName) throws(Errno) {
        try send { pointer in
            name.withCString { fuse_lowlevel_notify_inval_entry(pointer, parent, $0, name.bytes.count) }
        }
    }

    /// Drops cached data of `inode` from `offset` for `length` bytes (0 = to the end) and its cached
    /// attributes; a negative `offset` drops only the attributes (`fuse_lowlevel_notify_inval_inode`).
    /// - Throws: `Errno` from the kernel, `.notConnected` without a session.
    public func invalidateInode(_ inode: Inode, offset: Int64 = 0, length: Int64 = 0) throws(Errno) {
        try send { pointer in fuse_lowlevel_notify_inval_inode(pointer, inode, off_t(offset), off_t(length)) }
    }

    /// Tells the kernel `name` in `parent` (pointing to `child`) was deleted, also dropping open-file
    /// state such as its dentry (`fuse_lowlevel_notify_delete`).
    /// - Throws: `Errno` from the kernel, `.notConnected` without a session.
    public func notifyDelete(parent: Inode, child: Inode, name: FileName) throws(Errno) {
        try send { pointer in
            name.withCString { fuse_lowlevel_notify_delete(pointer, parent, child, $0, name.bytes.count) }
        }
    }

    /// Puts `bytes` into the kernel's page cache of `inode` at `offset`
    /// (`fuse_lowlevel_notify_store`); a store reaching past the cached size grows it. The pages it
    /// fills count as up to date, so reads of them never reach the filesystem: store only bytes
    /// that are the file's content now, and invalidate after any later change.
    /// - Throws: `Errno` from the kernel, `.notConnected` without a session.
    public func store(_ inode: Inode, offset: Int64, bytes: [UInt8]) throws(Errno) {
        guard !bytes.isEmpty else { return }
        try send { pointer in
            bytes.withUnsafeBytes { raw in
                var vector = fuse_bufvec()
                vector.count = 1
                vector.buf.size = raw.count
                vector.buf.mem = UnsafeMutableRawPointer(mutating: raw.baseAddress)
                vector.buf.fd = -1
                return fuse_lowlevel_notify_store(pointer, inode, off_t(offset), &vector, fuse_buf_copy_flags(0))
            }
        }
    }

    private func send(_ call: (OpaquePointer) -> Int32) throws(Errno) {
        let status: Int32 = session.withLock { bits in
            guard let bits, let pointer = OpaquePointer(bitPattern: bits) else { return -ENOTCONN }
            return call(pointer)
        }
        if status < 0 && status != -ENOENT { throw Errno(rawValue: -status) }
    }
}

/// `Reply`: the only place that calls `fuse_reply_*`; noncopyable, so each request replies once.
///
/// Every method is `consuming`: the compiler rejects a second reply, and `deinit` answers `EIO`
/// if a code path forgot to reply (a request without a reply would hang its caller forever).
/// Replies that hand the kernel a reference (entry, create, open, opendir, readdirplus) undo it
/// on the filesystem when the kernel no longer waits for the answer (interrupted request).

import CFuse
import Glibc

struct Reply: ~Copyable {
    private let request: fuse_req_t

    init(_ request: fuse_req_t) { self.request = request }

    deinit { _ = fuse_reply_err(request, EIO) }

    /// `fuse_reply_err(errno)`.
    consuming func error(_ errno: Errno) {
        _ = fuse_reply_err(request, errno.rawValue)
        discard self
    }

    /// `fuse_reply_err(0)`: success without data.
    consuming func success() {
        _ = fuse_reply_err(request, 0)
        discard self
    }

    /// `fuse_reply_none` (forget, forget_multi).
    consuming func none() {
        fuse_reply_none(request)
        discard self
    }

    /// `fuse_reply_entry`; forgets the reference again if the kernel did not take it.
    consuming func entry(_ entry: Entry, fileSystem: any FileSystem) {
        var parameter = entry.parameter
        if fuse_reply_entry(request, &parameter) != 0, entry.inode != 0 {
            fileSystem.forget(entry.inode, lookups: 1)
        }
        discard self
    }

    /// `fuse_reply_create`; forgets and releases again if the kernel did not take them.
    consuming func create(
        _ entry: Entry, _ opened: Opened, info: UnsafeMutablePointer<fuse_file_info>,
        context: RequestContext, fileSystem: any FileSystem
    ) {
        var parameter = entry.parameter
        opened.store(in: &info.pointee)
        if fuse_reply_create(request, &parameter, info) != 0 {
            fileSystem.forget(entry.inode, lookups: 1)
            try? fileSystem.release(context, inode: entry.inode, handle: opened.handle, flags: info.pointee.flags)
        }
        discard self
    }

    /// `fuse_reply_open`; returns false if the kernel did not take the handle (caller releases it).
    consuming func open(_ opened: Opened, info: UnsafeMutablePointer<fuse_file_info>) -> Bool {
        opened.store(in: &info.pointee)
        let delivered = fuse_reply_open(request, info) == 0
        discard self
        return delivered
    }

    /// `fuse_reply_attr`.
    consuming func attributes(_ reply: AttributesReply) {
        var st = reply.attributes.stat
        _ = fuse_reply_attr(request, &st, reply.timeout)
        discard self
    }

    /// `fuse_reply_readlink` (the target must not contain NUL bytes).
    consuming func readlink(_ target: [UInt8]) {
        let status = FileName(bytes: target).withCString { fuse_reply_readlink(request, $0) }
        _ = status
        discard self
    }

    /// `fuse_reply_write`.
    consuming func written(_ count: Int) {
        _ = fuse_reply_write(request, count)
        discard self
    }

    /// `fuse_reply_buf`; returns false if the kernel did not take the data.
    @discardableResult
    consuming func buffer(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let status = fuse_reply_buf(request, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
        discard self
        return status == 0
    }

    /// `fuse_reply_buf` with an array.
    consuming func bytes(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBufferPointer {
            fuse_reply_buf(request, UnsafeRawPointer($0.baseAddress)?.assumingMemoryBound(to: CChar.self), $0.count)
        }
        discard self
    }

    /// `fuse_reply_ioctl` with result 0 and `bytes` as the output buffer.
    consuming func ioctl(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { fuse_reply_ioctl(request, 0, $0.baseAddress, $0.count) }
        discard self
    }

    /// `fuse_reply_statfs`.
    consuming func statfs(_ statistics: FilesystemStatistics) {
        var st = statistics.statvfs
        _ = fuse_reply_statfs(request, &st)
        discard self
    }

    /// getxattr/listxattr: the needed size when `size` is 0 (`fuse_reply_xattr`), else the data,
    /// or `ERANGE` when it does not fit.
    consuming func xattr(_ value: [UInt8], size: Int) {
        if size == 0 {
            _ = fuse_reply_xattr(request, value.count)
        } else if value.count > size {
            _ = fuse_reply_err(request, ERANGE)
        } else {
            _ = value.withUnsafeBufferPointer {
                fuse_reply_buf(request, UnsafeRawPointer($0.baseAddress)?.assumingMemoryBound(to: CChar.self), $0.count)
            }
        }
        discard self
    }
}

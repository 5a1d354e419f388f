/// `Operations`: the `fuse_lowlevel_ops` table of `@convention(c)` trampolines into `FileSystem`.
///
/// Each trampoline captures nothing; it finds the `Bridge` through `fuse_req_userdata`, calls the
/// filesystem, and answers through a `Reply`. The static functions are qualified with
/// `Operations.` inside the closures (an unqualified call would capture `Self`).

import CFuse
import Glibc

enum Operations {
    /// The operations table passed to `fuse_session_new` (libfuse copies it).
    static func table() -> fuse_lowlevel_ops {
        var ops = fuse_lowlevel_ops()
        ops.`init` = { userdata, conn in Operations.initialize(userdata, conn) }
        ops.destroy = { userdata in Bridge.of(userdata: userdata).destroyOnce() }
        ops.lookup = { req, parent, name in Operations.lookup(req!, parent, name!) }
        ops.forget = { req, ino, nlookup in Operations.forget(req!, ino, nlookup) }
        ops.forget_multi = { req, count, forgets in Operations.forgetMulti(req!, count, forgets) }
        ops.getattr = { req, ino, fi in Operations.getattr(req!, ino, fi) }
        ops.setattr = { req, ino, attr, toSet, fi in Operations.setattr(req!, ino, attr!, toSet, fi) }
        ops.readlink = { req, ino in Operations.readlink(req!, ino) }
        ops.mknod = { req, parent, name, mode, rdev in Operations.mknod(req!, parent, name!, mode, rdev) }
        ops.mkdir = { req, parent, name, mode in Operations.mkdir(req!, parent, name!, mode) }
        ops.unlink = { req, parent, name in Operations.unlink(req!, parent, name!) }
        ops.rmdir = { req, parent, name in Operations.rmdir(req!, parent, name!) }
        ops.symlink = { req, link, parent, name in Operations.symlink(req!, link!, parent, name!) }
        ops.rename = { req, parent, name, newParent, newName, flags in
            Operations.rename(req!, parent, name!, newParent, newName!, flags)
        }
        ops.link = { req, ino, newParent, newName in Operations.link(req!, ino, newParent, newName!) }
        ops.open = { req, ino, fi in Operations.open(req!, ino, fi!) }
        ops.read = { req, ino, size, off, fi in Operations.read(req!, ino, size, off, fi!) }
        ops.write = { req, ino, buf, size, off, fi in Operations.write(req!, ino, buf, size, off, fi!) }
        ops.flush = { req, ino, fi in Operations.flush(req!, ino, fi!) }
        ops.release = { req, ino, fi in Operations.release(req!, ino, fi!) }
        ops.fsync = { req, ino, datasync, fi in Operations.fsync(req!, ino, datasync, fi!) }
        ops.fallocate = { req, ino, mode, offset, length, fi in Operations.fallocate(req!, ino, mode, offset, length, fi!) }
        ops.opendir = { req, ino, fi in Operations.opendir(req!, ino, fi!) }
        ops.readdir = { req, ino, size, off, fi in Operations.readdir(req!, ino, size, off, fi!) }
        ops.readdirplus = { req, ino, size, off, fi in Operations.readdirplus(req!, ino, size, off, fi!) }
        ops.releasedir = { req, ino, fi in Operations.releasedir(req!, ino, fi!) }
        ops.fsyncdir = { req, ino, datasync, fi in Operations.fsyncdir(req!, ino, datasync, fi!) }
        ops.statfs = { req, ino in Operations.statfs(req!, ino) }
        ops.setxattr = { req, ino, name, value, size, flags in
            Operations.setxattr(req!, ino, name!, value, size, flags)
        }
        ops.getxattr = { req, ino, name, size in Operations.getxattr(req!, ino, name!, size) }
        ops.listxattr = { req, ino, size in Operations.listxattr(req!, ino, size) }
        ops.removexattr = { req, ino, name in Operations.removexattr(req!, ino, name!) }
        ops.access = { req, ino, mask in Operations.access(req!, ino, mask) }
        ops.create = { req, parent, name, mode, fi in Operations.create(req!, parent, name!, mode, fi!) }
        ops.ioctl = { req, ino, cmd, _, _, flags, inBuffer, inSize, outSize in
            Operations.ioctl(req!, ino, cmd, flags, inBuffer, inSize, outSize)
        }
        return ops
    }

    // MARK: Shared shapes

    /// Runs an operation on the request's filesystem and replies once: `send` with its result, or
    /// the errno it threw.
    static func respond<Result>(
        _ request: fuse_req_t, _ body: (any FileSystem, RequestContext) throws(Errno) -> Result,
        send: (consuming Reply, Result, any FileSystem) -> Void
    ) {
        let fileSystem = Bridge.of(request).fileSystem
        let reply = Reply(request)
        let result: Result
        do throws(Errno) {
            result = try body(fileSystem, RequestContext(request: request))
        } catch {
            reply.error(error)
            return
        }
        send(reply, result, fileSystem)
    }

    /// Runs an operation that replies with an entry (lookup, mknod, mkdir, symlink, link).
    static func replyEntry(_ request: fuse_req_t, _ body: (any FileSystem, RequestContext) throws(Errno) -> Entry) {
        respond(request, body) { reply, entry, fileSystem in reply.entry(entry, fileSystem: fileSystem) }
    }

    /// Runs an operation that replies with success or an errno.
    static func replyStatus(_ request: fuse_req_t, _ body: (any FileSystem, RequestContext) throws(Errno) -> Void) {
        respond(request, body) { reply, _, _ in reply.success() }
    }

    /// Runs an operation that replies with attributes (getattr, setattr).
    static func replyAttributes(
        _ request: fuse_req_t, _ body: (any FileSystem, RequestContext) throws(Errno) -> AttributesReply
    ) {
        respond(request, body) { reply, attributes, _ in reply.attributes(attributes) }
    }

    /// Runs an operation that replies with bytes (read, readlink uses its own).
    static func replyBytes(_ request: fuse_req_t, _ body: (any FileSystem, RequestContext) throws(Errno) -> [UInt8]) {
        respond(request, body) { reply, bytes, _ in reply.bytes(bytes) }
    }
}

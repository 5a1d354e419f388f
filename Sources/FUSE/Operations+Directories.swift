/// Trampolines for directories: opendir, readdir, readdirplus, releasedir, fsyncdir.

import CFuse
import Glibc

extension Operations {
    static func opendir(_ request: fuse_req_t, _ inode: fuse_ino_t, _ info: UnsafeMutablePointer<fuse_file_info>) {
        let fileSystem = Bridge.of(request).fileSystem
        let context = RequestContext(request: request)
        let reply = Reply(request)
        do throws(Errno) {
            let opened = try fileSystem.opendir(context, inode: inode, flags: info.pointee.flags)
            if !reply.open(opened, info: info) {
                try? fileSystem.releasedir(context, inode: inode, handle: opened.handle)
            }
        } catch {
            reply.error(error)
        }
    }

    /// Replies with what was packed; an error only when nothing was packed (as passthrough_ll).
    static func readdir(
        _ request: fuse_req_t, _ inode: fuse_ino_t, _ size: Int, _ offset: off_t,
        _ info: UnsafeMutablePointer<fuse_file_info>
    ) {
        let fileSystem = Bridge.of(request).fileSystem
        let buffer = DirectoryBuffer(request: request, capacity: size)
        let reply = Reply(request)
        do throws(Errno) {
            try fileSystem.readdir(
                RequestContext(request: request), inode: inode, handle: info.pointee.fh, offset: Int64(offset),
                into: buffer)
            reply.buffer(buffer.bytes)
        } catch {
            if buffer.count > 0 { reply.buffer(buffer.bytes) } else { reply.error(error) }
        }
    }

    /// Like `readdir`; if the reply does not reach the kernel, forgets the references it carried.
    static func readdirplus(
        _ request: fuse_req_t, _ inode: fuse_ino_t, _ size: Int, _ offset: off_t,
        _ info: UnsafeMutablePointer<fuse_file_info>
    ) {
        let fileSystem = Bridge.of(request).fileSystem
        let buffer = DirectoryPlusBuffer(request: request, capacity: size)
        let reply = Reply(request)
        var failure: Errno?
        do throws(Errno) {
            try fileSystem.readdirplus(
                RequestContext(request: request), inode: inode, handle: info.pointee.fh, offset: Int64(offset),
                into: buffer)
        } catch {
            failure = error
        }
        if let failure, buffer.count == 0 {
            reply.error(failure)
        } else if !reply.buffer(buffer.bytes), !buffer.referencedInodes.isEmpty {
            fileSystem.forget(buffer.referencedInodes.map { (inode: $0, lookups: 1) })
        }
    }

    static func releasedir(_ request: fuse_req_t, _ inode: fuse_ino_t, _ info: UnsafeMutablePointer<fuse_file_info>) {
        let handle = info.pointee.fh
        replyStatus(request) { fs, context throws(Errno) in
            try fs.releasedir(context, inode: inode, handle: handle)
        }
    }

    static func fsyncdir(
        _ request: fuse_req_t, _ inode: fuse_ino_t, _ dataSync: Int32, _ info: UnsafeMutablePointer<fuse_file_info>
    ) {
        let handle = info.pointee.fh
        replyStatus(request) { fs, context throws(Errno) in
            try fs.fsyncdir(context, inode: inode, handle: handle, dataOnly: dataSync != 0)
        }
    }
}

/// Trampolines for name and inode operations: lookup, forget, getattr, setattr, readlink, mknod,
/// mkdir, unlink, rmdir, symlink, rename, link.

import CFuse
import Glibc

extension Operations {
    static func lookup(_ request: fuse_req_t, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>) {
        replyEntry(request) { fs, context throws(Errno) in
            try fs.lookup(context, parent: parent, name: FileName(cString: name))
        }
    }

    static func forget(_ request: fuse_req_t, _ inode: fuse_ino_t, _ lookups: UInt64) {
        Bridge.of(request).fileSystem.forget(inode, lookups: lookups)
        Reply(request).none()
    }

    static func forgetMulti(_ request: fuse_req_t, _ count: Int, _ forgets: UnsafeMutablePointer<fuse_forget_data>?) {
        let items = UnsafeBufferPointer(start: forgets, count: count).map {
            (inode: $0.ino, lookups: $0.nlookup)
        }
        Bridge.of(request).fileSystem.forget(items)
        Reply(request).none()
    }

    static func getattr(_ request: fuse_req_t, _ inode: fuse_ino_t, _ info: UnsafeMutablePointer<fuse_file_info>?) {
        replyAttributes(request) { fs, context throws(Errno) in
            try fs.getattr(context, inode: inode, handle: info?.pointee.fh)
        }
    }

    static func setattr(
        _ request: fuse_req_t, _ inode: fuse_ino_t, _ attributes: UnsafeMutablePointer<stat>, _ mask: Int32,
        _ info: UnsafeMutablePointer<fuse_file_info>?
    ) {
        let changes = SetAttributes(stat: attributes.pointee, mask: mask, handle: info?.pointee.fh)
        replyAttributes(request) { fs, context throws(Errno) in
            try fs.setattr(context, inode: inode, changes: changes)
        }
    }

    static func readlink(_ request: fuse_req_t, _ inode: fuse_ino_t) {
        respond(request, { fs, context throws(Errno) in try fs.readlink(context, inode: inode) }) { reply, target, _ in
            reply.readlink(target)
        }
    }

    static func mknod(
        _ request: fuse_req_t, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>, _ mode: mode_t, _ rdev: dev_t
    ) {
        replyEntry(request) { fs, context throws(Errno) in
            try fs.mknod(context, parent: parent, name: FileName(cString: name), mode: mode, rdev: UInt64(rdev))
        }
    }

    static func mkdir(_ request: fuse_req_t, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>, _ mode: mode_t) {
        replyEntry(request) { fs, context throws(Errno) in
            try fs.mkdir(context, parent: parent, name: FileName(cString: name), mode: mode)
        }
    }

    static func unlink(_ request: fuse_req_t, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>) {
        replyStatus(request) { fs, context throws(Errno) in
            try fs.unlink(context, parent: parent, name: FileName(cString: name))
        }
    }

    static func rmdir(_ request: fuse_req_t, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>) {
        replyStatus(request) { fs, context throws(Errno) in
            try fs.rmdir(context, parent: parent, name: FileName(cString: name))
        }
    }

    static func symlink(
        _ request: fuse_req_t, _ target: UnsafePointer<CChar>, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>
    ) {
        replyEntry(request) { fs, context throws(Errno) in
            try fs.symlink(
                context, target: FileName(cString: target).bytes, parent: parent, name: FileName(cString: name))
        }
    }

    static func rename(
        _ request: fuse_req_t, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>, _ newParent: fuse_ino_t,
        _ newName: UnsafePointer<CChar>, _ flags: UInt32
    ) {
        replyStatus(request) { fs, context throws(Errno) in
            try fs.rename(
                context, parent: parent, name: FileName(cString: name), newParent: newParent,
                newName: FileName(cString: newName), flags: RenameFlags(rawValue: flags))
        }
    }

    static func link(
        _ request: fuse_req_t, _ inode: fuse_ino_t, _ newParent: fuse_ino_t, _ newName: UnsafePointer<CChar>
    ) {
        replyEntry(request) { fs, context throws(Errno) in
            try fs.link(context, inode: inode, newParent: newParent, newName: FileName(cString: newName))
        }
    }
}

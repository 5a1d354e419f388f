/// Trampolines for extended attributes, statfs, access, and the init callback.

import CFuse
import Glibc

extension Operations {
    static func setxattr(
        _ request: fuse_req_t, _ inode: fuse_ino_t, _ name: UnsafePointer<CChar>, _ value: UnsafePointer<CChar>?,
        _ size: Int, _ flags: Int32
    ) {
        let bytes = Array(UnsafeRawBufferPointer(start: value, count: size))
        replyStatus(request) { fs, context throws(Errno) in
            try fs.setxattr(
                context, inode: inode, name: FileName(cString: name), value: bytes, flags: XattrFlags(rawValue: flags))
        }
    }

    static func getxattr(_ request: fuse_req_t, _ inode: fuse_ino_t, _ name: UnsafePointer<CChar>, _ size: Int) {
        let fileSystem = Bridge.of(request).fileSystem
        let reply = Reply(request)
        do throws(Errno) {
            let value = try fileSystem.getxattr(RequestContext(request: request), inode: inode, name: FileName(cString: name))
            reply.xattr(value, size: size)
        } catch {
            reply.error(error)
        }
    }

    /// Packs the names as NUL-terminated strings, one after another.
    static func listxattr(_ request: fuse_req_t, _ inode: fuse_ino_t, _ size: Int) {
        let fileSystem = Bridge.of(request).fileSystem
        let reply = Reply(request)
        do throws(Errno) {
            let names = try fileSystem.listxattr(RequestContext(request: request), inode: inode)
            reply.xattr(names.flatMap { $0.bytes + [0] }, size: size)
        } catch {
            reply.error(error)
        }
    }

    static func removexattr(_ request: fuse_req_t, _ inode: fuse_ino_t, _ name: UnsafePointer<CChar>) {
        replyStatus(request) { fs, context throws(Errno) in
            try fs.removexattr(context, inode: inode, name: FileName(cString: name))
        }
    }

    static func statfs(_ request: fuse_req_t, _ inode: fuse_ino_t) {
        respond(request, { fs, context throws(Errno) in try fs.statfs(context, inode: inode) }) { reply, statistics, _ in
            reply.statfs(statistics)
        }
    }

    static func access(_ request: fuse_req_t, _ inode: fuse_ino_t, _ mask: Int32) {
        replyStatus(request) { fs, context throws(Errno) in
            try fs.access(context, inode: inode, mask: mask)
        }
    }

    /// The init callback: module defaults, then the filesystem's say (see `ConnectionInfo`).
    static func initialize(_ userdata: UnsafeMutableRawPointer?, _ connection: UnsafeMutablePointer<fuse_conn_info>?) {
        guard let connection else { return }
        let bridge = Bridge.of(userdata: userdata)
        var info = ConnectionInfo(connection.pointee)
        info.want.remove([.writebackCache, .atomicOTrunc])
        if bridge.fileSystem.implementsReaddirplus {
            info.want.insert([.readdirplus, .readdirplusAuto])
        } else {
            info.want.remove([.readdirplus, .readdirplusAuto])
        }
        if let maxRead = bridge.maxRead { info.maxRead = maxRead }
        bridge.fileSystem.initialize(connection: &info, notifier: bridge.notifier)
        info.store(in: &connection.pointee)
        bridge.didInitialize()
    }
}

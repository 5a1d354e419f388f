/// Trampolines for open files: open, read, write, flush, release, fsync, fallocate, create.

import CFuse
import Glibc

extension Operations {
    static func open(_ request: fuse_req_t, _ inode: fuse_ino_t, _ info: UnsafeMutablePointer<fuse_file_info>) {
        let fileSystem = Bridge.of(request).fileSystem
        let context = RequestContext(request: request)
        let flags = info.pointee.flags
        let reply = Reply(request)
        do throws(Errno) {
            let opened = try fileSystem.open(context, inode: inode, flags: flags)
            if !reply.open(opened, info: info) {
                try? fileSystem.release(context, inode: inode, handle: opened.handle, flags: flags)
            }
        } catch {
            reply.error(error)
        }
    }

    static func read(
        _ request: fuse_req_t, _ inode: fuse_ino_t, _ size: Int, _ offset: off_t,
        _ info: UnsafeMutablePointer<fuse_file_info>
    ) {
        let handle = info.pointee.fh
        replyBytes(request) { fs, context throws(Errno) in
            try fs.read(context, inode: inode, handle: handle, offset: Int64(offset), size: size)
        }
    }

    static func write(
        _ request: fuse_req_t, _ inode: fuse_ino_t, _ buffer: UnsafePointer<CChar>?, _ size: Int, _ offset: off_t,
        _ info: UnsafeMutablePointer<fuse_file_info>
    ) {
        let fileSystem = Bridge.of(request).fileSystem
        let reply = Reply(request)
        do throws(Errno) {
            let written = try fileSystem.write(
                RequestContext(request: request), inode: inode, handle: info.pointee.fh, offset: Int64(offset),
                data: UnsafeRawBufferPointer(start: buffer, count: size), flags: info.pointee.flags)
            reply.written(written)
        } catch {
            reply.error(error)
        }
    }

    static func flush(_ request: fuse_req_t, _ inode: fuse_ino_t, _ info: UnsafeMutablePointer<fuse_file_info>) {
        let handle = info.pointee.fh
        replyStatus(request) { fs, context throws(Errno) in
            try fs.flush(context, inode: inode, handle: handle)
        }
    }

    static func release(_ request: fuse_req_t, _ inode: fuse_ino_t, _ info: UnsafeMutablePointer<fuse_file_info>) {
        let handle = info.pointee.fh
        let flags = info.pointee.flags
        replyStatus(request) { fs, context throws(Errno) in
            try fs.release(context, inode: inode, handle: handle, flags: flags)
        }
    }

    static func fsync(
        _ request: fuse_req_t, _ inode: fuse_ino_t, _ dataSync: Int32, _ info: UnsafeMutablePointer<fuse_file_info>
    ) {
        let handle = info.pointee.fh
        replyStatus(request) { fs, context throws(Errno) in
            try fs.fsync(context, inode: inode, handle: handle, dataOnly: dataSync != 0)
        }
    }

    static func fallocate(
        _ request: fuse_req_t, _ inode: fuse_ino_t, _ mode: Int32, _ offset: off_t, _ length: off_t,
        _ info: UnsafeMutablePointer<fuse_file_info>
    ) {
        let handle = info.pointee.fh
        replyStatus(request) { fs, context throws(Errno) in
            try fs.fallocate(
                context, inode: inode, handle: handle, mode: AllocateMode(rawValue: mode), offset: Int64(offset), length: Int64(length))
        }
    }

    static func create(
        _ request: fuse_req_t, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>, _ mode: mode_t,
        _ info: UnsafeMutablePointer<fuse_file_info>
    ) {
        let fileSystem = Bridge.of(request).fileSystem
        let context = RequestContext(request: request)
        let reply = Reply(request)
        do throws(Errno) {
            let (entry, opened) = try fileSystem.create(
                context, parent: parent, name: FileName(cString: name), mode: mode, flags: info.pointee.flags)
            reply.create(entry, opened, info: info, context: context, fileSystem: fileSystem)
        } catch {
            reply.error(error)
        }
    }
}

/// `O_TMPFILE`: the kernel's `FUSE_TMPFILE` request, which libfuse 3.14 does not know (it has no
/// `tmpfile` operation and answers `ENOSYS`, after which the kernel says `EOPNOTSUPP` for good).
/// notesfs's own loop (``SpinningLoop``) takes the request out of the buffer before libfuse sees
/// it, asks ``FileSystem/tmpfile(_:parent:mode:flags:)`` and writes the reply itself: the same
/// `fuse_out_header` + `fuse_entry_out` + `fuse_open_out` as a `FUSE_CREATE` reply (linux/fuse.h).
/// With `-o clone_fd` or `-s` (libfuse's own loops) `O_TMPFILE` stays `EOPNOTSUPP`.

import CFuse
import Glibc

enum Tmpfile {
    /// `FUSE_TMPFILE` (kernel protocol 7.37).
    static let opcode: UInt32 = 51
    static let inHeaderSize = 40
    static let createInSize = 16

    /// Serves `buffer` if it holds a `FUSE_TMPFILE` request: true when it did (the request is
    /// answered, libfuse must not see it).
    static func serve(_ buffer: fuse_buf, fileSystem: any FileSystem, deviceFD: Int32) -> Bool {
        guard buffer.flags.rawValue & FUSE_BUF_IS_FD.rawValue == 0, let memory = buffer.mem,
            buffer.size >= inHeaderSize + createInSize
        else { return false }
        let bytes = UnsafeRawBufferPointer(start: memory, count: buffer.size)
        guard load(UInt32.self, bytes, 4) == opcode else { return false }
        let unique = load(UInt64.self, bytes, 8)
        let parent = load(UInt64.self, bytes, 16)
        let context = RequestContext(
            uid: load(UInt32.self, bytes, 24), gid: load(UInt32.self, bytes, 28), pid: pid_t(bitPattern: load(UInt32.self, bytes, 32)),
            umask: mode_t(load(UInt32.self, bytes, inHeaderSize + 8)))
        let flags = Int32(bitPattern: load(UInt32.self, bytes, inHeaderSize))
        let mode = mode_t(load(UInt32.self, bytes, inHeaderSize + 4))
        let reply: [UInt8]
        do throws(Errno) {
            let (entry, opened) = try fileSystem.tmpfile(context, parent: parent, mode: mode, flags: flags)
            reply = header(unique: unique, error: 0, bodySize: 144) + entryOut(entry) + openOut(opened)
            if !send(reply, deviceFD) {
                fileSystem.forget(entry.inode, lookups: 1)
                try? fileSystem.release(context, inode: entry.inode, handle: opened.handle, flags: flags)
            }
        } catch {
            _ = send(header(unique: unique, error: -error.rawValue, bodySize: 0), deviceFD)
        }
        return true
    }

    private static func load<T: FixedWidthInteger>(_ type: T.Type, _ bytes: UnsafeRawBufferPointer, _ offset: Int) -> T {
        LittleEndian.load(type, bytes, at: offset)
    }

    private static func send(_ reply: [UInt8], _ fd: Int32) -> Bool {
        reply.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == reply.count
    }

    private static func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { LittleEndian.bytes(value) }

    /// `fuse_out_header`: len, error, unique.
    private static func header(unique: UInt64, error: Int32, bodySize: Int) -> [UInt8] {
        le(UInt32(16 + bodySize)) + le(error) + le(unique)
    }

    /// `fuse_entry_out` (128 bytes): nodeid, generation, entry_valid, attr_valid, their
    /// nanoseconds, then `fuse_attr` (88 bytes).
    private static func entryOut(_ entry: Entry) -> [UInt8] {
        func seconds(_ timeout: Double) -> (UInt64, UInt32) {
            let clamped = min(max(timeout, 0), 1e9)
            return (UInt64(clamped), UInt32((clamped - clamped.rounded(.down)) * 1e9))
        }
        let (entrySeconds, entryNanoseconds) = seconds(entry.entryTimeout)
        let (attributeSeconds, attributeNanoseconds) = seconds(entry.attributeTimeout)
        let st = entry.attributes.stat
        var out = le(entry.inode) + le(entry.generation) + le(entrySeconds) + le(attributeSeconds)
        out += le(entryNanoseconds) + le(attributeNanoseconds)
        out += le(UInt64(st.st_ino)) + le(UInt64(bitPattern: Int64(st.st_size))) + le(UInt64(bitPattern: Int64(st.st_blocks)))
        out += le(UInt64(bitPattern: Int64(st.st_atim.tv_sec))) + le(UInt64(bitPattern: Int64(st.st_mtim.tv_sec)))
        out += le(UInt64(bitPattern: Int64(st.st_ctim.tv_sec)))
        out += le(UInt32(truncatingIfNeeded: st.st_atim.tv_nsec)) + le(UInt32(truncatingIfNeeded: st.st_mtim.tv_nsec))
        out += le(UInt32(truncatingIfNeeded: st.st_ctim.tv_nsec))
        out += le(UInt32(st.st_mode)) + le(UInt32(truncatingIfNeeded: st.st_nlink)) + le(UInt32(st.st_uid)) + le(UInt32(st.st_gid))
        out += le(UInt32(truncatingIfNeeded: st.st_rdev)) + le(UInt32(truncatingIfNeeded: st.st_blksize)) + le(UInt32(0))
        return out
    }

    /// `fuse_open_out` (16 bytes): fh, open_flags (`FOPEN_*`), padding.
    private static func openOut(_ opened: Opened) -> [UInt8] {
        var info = fuse_file_info()
        opened.store(in: &info)
        var flags: UInt32 = 0
        if info.direct_io != 0 { flags |= 1 }  // FOPEN_DIRECT_IO
        if info.keep_cache != 0 { flags |= 2 }  // FOPEN_KEEP_CACHE
        if info.nonseekable != 0 { flags |= 4 }  // FOPEN_NONSEEKABLE
        if info.noflush != 0 { flags |= 32 }  // FOPEN_NOFLUSH
        return le(info.fh) + le(flags) + le(UInt32(0))
    }
}

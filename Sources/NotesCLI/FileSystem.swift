import Foundation
import POSIX

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The system calls import and export make, each retried on `EINTR` and turned into a ``CLIError``.
enum FileSystem {
    /// Runs `body`, turning the POSIX layer's error into a ``CLIError``.
    static func io<T>(_ body: () throws(SystemCallError) -> T) throws(CLIError) -> T {
        do { return try body() } catch { throw .system(error) }
    }

    enum Kind: Sendable {
        /// `special`: a FIFO, socket or device; `other`: anything else.
        case directory, regular, symlink, special, other
    }

    /// What `lstat(2)` says about a path.
    struct Status: Sendable {
        var kind: Kind
        var size: Int
        /// `st_mtim`, to the nanosecond.
        var modificationTime: timespec
        var mode: mode_t = 0
        var rdev: UInt64 = 0
        /// `st_dev` and `st_ino`, which tell hard links apart, and `st_nlink`.
        var device: UInt64 = 0
        var inode: UInt64 = 0
        var linkCount: UInt64 = 1

        var modificationDate: Date { FileSystem.date(modificationTime) }
        var identity: Identity { Identity(device: device, inode: inode) }

        init(_ st: stat) {
            let kind: Kind =
                switch st.st_mode & S_IFMT {
                case S_IFDIR: .directory
                case S_IFREG: .regular
                case S_IFLNK: .symlink
                case S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK: .special
                default: .other
                }
            self.init(
                kind: kind, size: Int(st.st_size), modificationTime: st.st_mtim, mode: st.st_mode, rdev: UInt64(st.st_rdev),
                device: UInt64(st.st_dev), inode: UInt64(st.st_ino), linkCount: UInt64(st.st_nlink))
        }

        init(
            kind: Kind, size: Int, modificationTime: timespec, mode: mode_t = 0, rdev: UInt64 = 0, device: UInt64 = 0, inode: UInt64 = 0,
            linkCount: UInt64 = 1
        ) {
            (self.kind, self.size, self.modificationTime, self.mode, self.rdev) = (kind, size, modificationTime, mode, rdev)
            (self.device, self.inode, self.linkCount) = (device, inode, linkCount)
        }
    }

    /// Which file a descriptor or name is: `st_dev` and `st_ino`.
    struct Identity: Sendable, Hashable {
        var device: UInt64
        var inode: UInt64
    }

    /// `lstat(2)`; nil when the path does not exist.
    static func status(_ path: String) throws(CLIError) -> Status? {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            if errno == ENOENT { return nil }
            throw CLIError.system("stat", path, errno: errno)
        }
        return Status(st)
    }

    /// `readlink(2)`: a symlink's target bytes.
    static func symlinkTarget(_ path: String) throws(CLIError) -> [UInt8] {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count)
        guard count >= 0 else { throw CLIError.system("readlink", path, errno: errno) }
        return buffer[..<count].map { UInt8(bitPattern: $0) }
    }

    /// The names in a directory (`readdir(3)`), as raw bytes, without `.` and `..`.
    static func names(in directory: String) throws(CLIError) -> [[UInt8]] {
        guard let dir = opendir(directory) else { throw CLIError.system("opendir", directory, errno: errno) }
        defer { closedir(dir) }
        return readNames(dir)
    }

    /// The names `readdir(3)` gives for an open directory stream, without `.` and `..`.
    static func readNames(_ dir: OpaquePointer) -> [[UInt8]] {
        var names: [[UInt8]] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in Array(raw.prefix(while: { $0 != 0 })) }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            names.append(name)
        }
        return names
    }

    /// Creates a new file for writing (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600): nothing
    /// already at `path` (a symbolic link, a file) is opened or written through.
    /// - Throws: an I/O ``CLIError`` naming `path`, also when something is already there.
    static func createNewFile(_ path: String) throws(CLIError) -> Int32 {
        let fd = Syscall.retrying { open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        guard fd >= 0 else { throw CLIError.system("open", path, errno: errno) }
        return fd
    }

    /// `mkdir(2)`, succeeding when a directory is already there.
    static func makeDirectory(_ path: String) throws(CLIError) {
        if mkdir(path, 0o755) == 0 { return }
        let code = errno
        if code == EEXIST, try status(path)?.kind == .directory { return }
        throw CLIError.system("mkdir", path, errno: code)
    }

    /// `mkdir -p`.
    static func makeDirectories(_ path: String) throws(CLIError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            try makeDirectory(prefix)
        }
    }

    /// `UTIME_OMIT` from `<sys/stat.h>` (a macro Swift does not import): leave this time alone.
    static let utimeOmit = (1 << 30) - 2

    /// Sets a file's mtime (`utimensat(2)`, atime left alone), to the nanosecond the `Date` holds.
    static func setModificationDate(_ date: Date, of path: String) throws(CLIError) {
        var times = [timespec(tv_sec: 0, tv_nsec: utimeOmit), timespec(date)]
        guard utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) == 0 else {
            throw CLIError.system("utimensat", path, errno: errno)
        }
    }

    static func date(_ time: timespec) -> Date {
        Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000)
    }

    /// `mkdtemp(3)` under `$TMPDIR` (else `/tmp`).
    static func makeTemporaryDirectory(_ label: String) throws(CLIError) -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/notesfs-\(label)-XXXXXX".utf8CString)
        let result = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!).map { String(cString: $0) } }
        guard let path = result else { throw CLIError.system("mkdtemp", base, errno: errno) }
        return path
    }

    /// Copies `prefix`, then everything `source` (a pipe, say) gives, into a new unlinked temp file in `directory`,
    /// 1 MiB at a time, and returns it open for reading from its start: what a stream holds, with a
    /// size, without holding it in memory.
    /// - Throws: an I/O ``CLIError`` naming `name` or the temp file (`ENOSPC` among them).
    static func spoolToTemporaryFile(_ source: Int32, source name: String, directory: String, prefix: [UInt8] = []) throws(CLIError)
        -> Int32
    {
        var template = Array("\(directory)/spool-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw CLIError.system("mkstemp", directory, errno: errno) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { chunk.deallocate() }
        var pending = prefix[...]  // bytes read from `source` already, written first
        while true {
            let count: Int
            if pending.isEmpty {
                count = Syscall.retrying { read(source, chunk.baseAddress, chunk.count) }
            } else {
                count = min(pending.count, chunk.count)
                pending.prefix(count).withUnsafeBytes { chunk.copyMemory(from: $0) }
                pending = pending.dropFirst(count)
            }
            guard count >= 0 else {
                close(fd)
                throw CLIError.system("read", name, errno: errno)
            }
            if count == 0 { break }
            do throws(SystemCallError) {
                try Syscall.writeAll(fd, UnsafeRawBufferPointer(rebasing: chunk[..<count]), path: directory)
            } catch {
                close(fd)
                throw .system(error)
            }
        }
        guard lseek(fd, 0, SEEK_SET) == 0 else {
            close(fd)
            throw CLIError.system("lseek", directory, errno: errno)
        }
        return fd
    }

    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }
}

extension timespec {
    /// The nearest `timespec` to a date (the store keeps dates as seconds in a Double).
    init(_ date: Date) {
        let t = date.timeIntervalSince1970
        var seconds = t.rounded(.down)
        var nanoseconds = ((t - seconds) * 1_000_000_000).rounded()
        if nanoseconds >= 1_000_000_000 {
            seconds += 1
            nanoseconds -= 1_000_000_000
        }
        self.init(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
    }
}

import Foundation
import POSIX

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The calls that work on a name inside an open directory (`openat(2)` and kin): import and export
/// resolve no path again and follow no symbolic link inside the tree they walk.
extension FileSystem {
    /// `fstat(2)`'s `st_dev` and `st_ino` of an open file.
    static func identity(_ fd: Int32, path: @autoclosure () -> String) throws(CLIError) -> Identity {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw CLIError.system("fstat", path(), errno: errno) }
        return Status(st).identity
    }

    /// `fstatat(2)` without following a symbolic link; nil when nothing has the name.
    static func status(_ name: String, in directory: Int32, path: @autoclosure () -> String) throws(CLIError) -> Status? {
        var st = stat()
        guard fstatat(directory, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return nil }
            throw CLIError.system("stat", path(), errno: errno)
        }
        return Status(st)
    }

    /// What is in the way of `path`, said in words: a symbolic link, a directory, or another file.
    static func inTheWay(_ status: Status) -> String {
        switch status.kind {
        case .symlink: "a symbolic link is in the way (not followed, not replaced)"
        case .directory: "a directory is in the way"
        case .regular: "a file is in the way"
        case .special, .other: "a special file is in the way"
        }
    }

    /// Opens directory `name` of `directory` (`O_DIRECTORY | O_NOFOLLOW`).
    ///
    /// - Throws: an I/O ``CLIError`` naming `path`, saying what is in the way when it is not a directory.
    static func openDirectory(_ name: String, in directory: Int32, path: @autoclosure () -> String) throws(CLIError) -> Int32 {
        let fd = Syscall.retrying { openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        guard fd < 0 else { return fd }
        let code = errno
        if code == ELOOP || code == ENOTDIR, let status = try status(name, in: directory, path: path()) {
            throw CLIError(.io, path(), inTheWay(status))
        }
        throw CLIError.system("open", path(), errno: code)
    }

    /// `mkdirat(2)` (mode 0755 less the umask), succeeding when something is already there: the
    /// caller opens it with ``openDirectory(_:in:path:)``, which refuses anything but a directory.
    static func makeDirectory(_ name: String, in directory: Int32, path: @autoclosure () -> String) throws(CLIError) {
        guard Syscall.retrying({ mkdirat(directory, name, 0o755) }) != 0 else { return }
        if errno == EEXIST { return }
        throw CLIError.system("mkdir", path(), errno: errno)
    }

    /// Opens file `name` of `directory` for reading without following a symbolic link, and checks it
    /// is the file a scan saw (`expected`): a name swapped for a link or another file is refused.
    ///
    /// - Throws: an I/O ``CLIError`` naming `path`.
    static func openForReading(_ name: String, in directory: Int32, path: @autoclosure () -> String, expected: Identity) throws(CLIError)
        -> Int32
    {
        // O_NONBLOCK: a FIFO put in a regular file's place must not block the open.
        let fd = Syscall.retrying { openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else { throw CLIError.system("open", path(), errno: errno) }
        do throws(CLIError) {
            var st = stat()
            guard fstat(fd, &st) == 0 else { throw CLIError.system("fstat", path(), errno: errno) }
            let status = Status(st)
            guard status.kind == .regular, status.identity == expected else {
                throw CLIError(.io, path(), "replaced since it was scanned; not read")
            }
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Creates file `name` in `directory` with `body` writing its contents, and nothing else: the
    /// bytes go to a new file (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0644 less the umask) that is
    /// renamed over the name only when what is there is a regular file. So a symbolic link, a hard
    /// link to a file elsewhere, or anything else already under the name is never written through.
    ///
    /// - Throws: an I/O ``CLIError`` naming `path`: what is in the way, or the failed call.
    static func replaceFile(
        _ name: String, in directory: Int32, path: @autoclosure () -> String, modificationDate: Date?,
        _ body: (Int32) throws(CLIError) -> Void
    ) throws(CLIError) {
        if let existing = try status(name, in: directory, path: path()), existing.kind != .regular {
            throw CLIError(.io, path(), inTheWay(existing))
        }
        var temporary = ""
        var fd: Int32 = -1
        for attempt in 0..<100 {
            temporary = ".notesfs-export-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            fd = Syscall.retrying { openat(directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644) }
            if fd >= 0 || errno != EEXIST || attempt == 99 { break }
        }
        guard fd >= 0 else { throw CLIError.system("open", path(), errno: errno) }
        do throws(CLIError) {
            try body(fd)
            if let modificationDate {
                var times = [timespec(tv_sec: 0, tv_nsec: utimeOmit), timespec(modificationDate)]
                guard futimens(fd, &times) == 0 else { throw CLIError.system("futimens", path(), errno: errno) }
            }
            guard close(fd) == 0 else {
                fd = -1
                throw CLIError.system("close", path(), errno: errno)
            }
            fd = -1
            guard renameat(directory, temporary, directory, name) == 0 else { throw CLIError.system("rename", path(), errno: errno) }
        } catch {
            if fd >= 0 { close(fd) }
            unlinkat(directory, temporary, 0)
            throw error
        }
    }

    /// Sets the mtime of `name` in `directory`, or of `directory` itself when `name` is nil, never
    /// following a symbolic link (`utimensat(2)` / `futimens(2)`).
    static func setModificationDate(_ date: Date, of name: String?, in directory: Int32, path: @autoclosure () -> String) throws(CLIError) {
        var times = [timespec(tv_sec: 0, tv_nsec: utimeOmit), timespec(date)]
        let result = if let name { utimensat(directory, name, &times, AT_SYMLINK_NOFOLLOW) } else { futimens(directory, &times) }
        guard result == 0 else { throw CLIError.system("utimensat", path(), errno: errno) }
    }

    /// The names in an open directory (`readdir(3)` on a duplicate of `directory`), as raw bytes,
    /// without `.` and `..`.
    static func names(in directory: Int32, path: @autoclosure () -> String) throws(CLIError) -> [[UInt8]] {
        let copy = openat(directory, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard copy >= 0 else { throw CLIError.system("open", path(), errno: errno) }
        guard let dir = fdopendir(copy) else {
            close(copy)
            throw CLIError.system("opendir", path(), errno: errno)
        }
        defer { closedir(dir) }
        return readNames(dir)
    }

    /// `readlinkat(2)`: a symlink's target bytes.
    static func symlinkTarget(_ name: String, in directory: Int32, path: @autoclosure () -> String) throws(CLIError) -> [UInt8] {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlinkat(directory, name, &buffer, buffer.count)
        guard count >= 0 else { throw CLIError.system("readlink", path(), errno: errno) }
        return buffer[..<count].map { UInt8(bitPattern: $0) }
    }
}

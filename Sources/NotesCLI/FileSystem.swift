import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The system calls import and export make, each retried on `EINTR` and turned into a ``CLIError``.
enum FileSystem {
    enum Kind: Sendable {
        case directory, regular, other
    }

    /// What `lstat(2)` says about a path.
    struct Status: Sendable {
        var kind: Kind
        var size: Int
        /// `st_mtim`, to the nanosecond.
        var modificationTime: timespec

        var modificationDate: Date { FileSystem.date(modificationTime) }
    }

    /// `lstat(2)`; nil when the path does not exist.
    static func status(_ path: String) throws(CLIError) -> Status? {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            if errno == ENOENT { return nil }
            throw CLIError.system("stat", path, errno: errno)
        }
        let type = st.st_mode & S_IFMT
        let kind: Kind = type == S_IFDIR ? .directory : type == S_IFREG ? .regular : .other
        return Status(kind: kind, size: Int(st.st_size), modificationTime: st.st_mtim)
    }

    /// The names in a directory (`readdir(3)`), as raw bytes, without `.` and `..`.
    static func names(in directory: String) throws(CLIError) -> [[UInt8]] {
        guard let dir = opendir(directory) else { throw CLIError.system("opendir", directory, errno: errno) }
        defer { closedir(dir) }
        var names: [[UInt8]] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in Array(raw.prefix(while: { $0 != 0 })) }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            names.append(name)
        }
        return names
    }

    /// Creates or replaces a file with `data` (mode 0644 less the umask).
    static func write(_ data: Data, to path: String) throws(CLIError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CLIError.system("open", path, errno: errno) }
        var failure: Int32 = 0
        data.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + done, buffer.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                done += n
            }
        }
        if close(fd) != 0, failure == 0 { failure = errno }
        if failure != 0 { throw CLIError.system("write", path, errno: failure) }
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

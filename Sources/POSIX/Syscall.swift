#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The system calls every module makes on files, each retried on `EINTR` and failing with a
/// ``SystemCallError`` that names the call and the path.
///
/// The only place that loops on `EINTR`: a call interrupted by a signal handler (a profiler's,
/// a debugger's, a terminal resize) is made again instead of failing or being taken as a short
/// read or write.
public enum Syscall {
    /// Calls `call` again while it fails with `EINTR` (a negative result and that errno); returns
    /// its first other result.
    @inlinable
    @discardableResult
    public static func retrying<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    /// Mode of the files the store and the sync engine create: the owner's only, whatever the umask.
    public static let privateFileMode: mode_t = 0o600
    /// Mode of the directories they create.
    public static let privateDirectoryMode: mode_t = 0o700

    /// `open(2)` with `O_CLOEXEC`. A file it creates gets exactly `mode` (`fchmod(2)` undoes a
    /// umask that took bits from it).
    ///
    /// - Throws: ``SystemCallError`` of `open` or `fchmod`.
    public static func open(_ path: String, _ flags: Int32, _ mode: mode_t = privateFileMode) throws(SystemCallError) -> Int32 {
        let fd = retrying { Glibc.open(path, flags | O_CLOEXEC, mode) }
        if fd < 0 { throw .current("open", path: path) }
        // The umask may have taken bits from `mode` (umask 0277 would leave 0400): then fchmod.
        // EPERM: an existing file of another owner (opened for its lock); its mode is not ours to fix.
        if flags & O_CREAT != 0, mode & ~processUmask != mode, fchmod(fd, mode) < 0, errno != EPERM {
            let error = SystemCallError.current("fchmod", path: path)
            Glibc.close(fd)
            throw error
        }
        return fd
    }

    /// The umask, read from `/proc/self/status` (umask(2) can only read it by changing it, for
    /// every thread). Unknown: all bits, so every created file gets its fchmod.
    public static let processUmask: mode_t = {
        let fd = Glibc.open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0o777 }
        defer { Glibc.close(fd) }
        guard let bytes = try? readToEnd(fd, limit: 1 << 16, path: "/proc/self/status") else { return 0o777 }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("Umask:") {
            let digits = line.dropFirst("Umask:".count).filter { $0 != " " && $0 != "\t" }
            return mode_t(digits, radix: 8) ?? 0o777
        }
        return 0o777
    }()

    /// `close(2)`; its error is not reported (the descriptor is gone either way).
    public static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// `fsync(2)`.
    ///
    /// - Throws: ``SystemCallError`` of `fsync` naming `path`.
    public static func fsync(_ fd: Int32, path: String) throws(SystemCallError) {
        if retrying({ Glibc.fsync(fd) }) < 0 { throw .current("fsync", path: path) }
    }

    /// `fsync(2)` of the directory at `path`: makes the renames, creations and unlinks done in it
    /// durable.
    ///
    /// - Throws: ``SystemCallError`` of `open directory` or `fsync directory`.
    public static func syncDirectory(_ path: String) throws(SystemCallError) {
        let fd = retrying { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        if fd < 0 { throw .current("open directory", path: path) }
        defer { close(fd) }
        if retrying({ Glibc.fsync(fd) }) < 0 { throw .current("fsync directory", path: path) }
    }

    /// `syncfs(2)` of the filesystem holding the open file `fd`: every write to it so far is
    /// durable when this returns. Looked up at run time (Glibc declares it only under
    /// `_GNU_SOURCE`); falls back to `sync(2)`.
    ///
    /// - Throws: ``SystemCallError`` of `syncfs` naming `path`.
    public static func syncFileSystem(_ fd: Int32, path: String) throws(SystemCallError) {
        guard let syncfsCall else { return Glibc.sync() }
        if retrying({ syncfsCall(fd) }) < 0 { throw .current("syncfs", path: path) }
    }

    private static let syncfsCall: (@convention(c) (Int32) -> Int32)? = dlsym(nil, "syncfs").map {
        unsafeBitCast($0, to: (@convention(c) (Int32) -> Int32).self)
    }

    /// `rename(2)`.
    ///
    /// - Throws: ``SystemCallError`` of `rename` naming `to`.
    public static func rename(_ from: String, _ to: String) throws(SystemCallError) {
        if retrying({ Glibc.rename(from, to) }) < 0 { throw .current("rename", path: to) }
    }

    /// `unlink(2)`; a missing file is not an error.
    ///
    /// - Throws: ``SystemCallError`` of `unlink`.
    public static func unlink(_ path: String) throws(SystemCallError) {
        if Glibc.unlink(path) < 0, errno != ENOENT { throw .current("unlink", path: path) }
    }

    /// `ftruncate(2)`: cuts or extends (sparsely) the open file to `size` bytes.
    ///
    /// - Throws: ``SystemCallError`` of `ftruncate` naming `path`.
    public static func ftruncate(_ fd: Int32, _ size: Int64, path: String) throws(SystemCallError) {
        if retrying({ Glibc.ftruncate(fd, off_t(size)) }) < 0 { throw .current("ftruncate", path: path) }
    }

    /// `flock(2)`, found by name: Swift sees only `struct flock` under that name.
    private static let flockCall: (@convention(c) (Int32, Int32) -> Int32)? = dlsym(nil, "flock").map {
        unsafeBitCast($0, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }

    /// `flock(2)`: waits for the exclusive (or with `shared`, a shared) lock of the open file.
    ///
    /// - Throws: ``SystemCallError`` of `flock` naming `path`.
    public static func lock(_ fd: Int32, shared: Bool = false, path: String) throws(SystemCallError) {
        guard let flockCall else { throw SystemCallError("flock", path: path, errno: ENOSYS) }
        if retrying({ flockCall(fd, shared ? LOCK_SH : LOCK_EX) }) < 0 { throw .current("flock", path: path) }
    }

    /// `flock(2)` with `LOCK_UN`.
    public static func unlock(_ fd: Int32) { _ = flockCall?(fd, LOCK_UN) }
}

extension Syscall {
    /// `poll(2)`: waits until one of `fds` is ready or `timeout` has passed (nil: no limit);
    /// after `EINTR`, waits again for the time left. Returns how many are ready (0: none in time).
    ///
    /// - Throws: ``SystemCallError`` of `poll`.
    public static func poll(_ fds: inout [pollfd], timeout: Duration?) throws(SystemCallError) -> Int {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now.advanced(by: $0) }
        while true {
            var milliseconds: Int32 = -1
            if let deadline {
                let left = clock.now.duration(to: deadline)
                let (seconds, attoseconds) = left.components
                let rounded = max(0, seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
                milliseconds = Int32(clamping: rounded)
            }
            let ready = Glibc.poll(&fds, nfds_t(fds.count), milliseconds)
            if ready >= 0 { return Int(ready) }
            if errno != EINTR { throw .current("poll", path: "\(fds.count) descriptors") }
        }
    }
}

import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Every raw system call the store makes, retried on `EINTR`, failing with ``RecordStoreError/io(path:operation:errno:)``.
enum Sys {
    static func fail(_ operation: String, _ path: String) -> RecordStoreError {
        .io(path: path, operation: operation, errno: errno)
    }

    @discardableResult
    static func retrying<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    /// Mode of every file the store creates: the owner's only, whatever the umask.
    static let fileMode: mode_t = 0o600
    /// Mode of every directory the store creates.
    static let directoryMode: mode_t = 0o700

    /// `open(2)`. A file it creates gets exactly `mode` (`fchmod` undoes a umask that took more).
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t = fileMode) throws(RecordStoreError) -> Int32 {
        let fd = retrying { Glibc.open(path, flags | O_CLOEXEC, mode) }
        if fd < 0 { throw fail("open", path) }
        // The umask may have taken bits from `mode` (umask 0277 would leave 0400): then fchmod.
        // EPERM: an existing file of another owner (opened for its lock); its mode is fsck's business.
        if flags & O_CREAT != 0, mode & ~processUmask != mode, fchmod(fd, mode) < 0, errno != EPERM {
            let error = fail("fchmod", path)
            close(fd)
            throw error
        }
        return fd
    }

    /// The umask when the store first created a file, read from `/proc/self/status` (umask(2)
    /// can only read it by changing it, for every thread). Unknown: assume all bits, so every
    /// created file gets its fchmod.
    static let processUmask: mode_t = {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
            let value = line.split(separator: "\t").last.flatMap({ mode_t($0.trimmingCharacters(in: .whitespaces), radix: 8) })
        else { return 0o777 }
        return value
    }()

    static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// Writes all of `bytes` (looping over short writes).
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(RecordStoreError) {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let n = retrying { Glibc.write(fd, base + done, bytes.count - done) }
            if n < 0 { throw fail("write", path) }
            done += n
        }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(RecordStoreError) {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(RecordStoreError) in try writeAll(fd, raw, path: path) }
        }
        try result.get()
    }

    static func fsync(_ fd: Int32, path: String) throws(RecordStoreError) {
        if retrying({ Glibc.fsync(fd) }) < 0 { throw fail("fsync", path) }
    }

    static func fsyncPath(_ path: String, directory: Bool = false) throws(RecordStoreError) {
        let fd = try open(path, directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY)
        defer { close(fd) }
        try fsync(fd, path: path)
    }

    static func rename(_ from: String, _ to: String) throws(RecordStoreError) {
        if retrying({ Glibc.rename(from, to) }) < 0 { throw fail("rename", to) }
    }

    /// Removes a file; a missing file is not an error.
    static func unlink(_ path: String) throws(RecordStoreError) {
        if Glibc.unlink(path) < 0, errno != ENOENT { throw fail("unlink", path) }
    }

    /// Creates a directory with ``directoryMode`` (exactly, whatever the umask); an existing one is not an error.
    static func mkdir(_ path: String) throws(RecordStoreError) {
        if Glibc.mkdir(path, directoryMode) < 0 {
            if errno != EEXIST { throw fail("mkdir", path) }
            return
        }
        // The umask may have taken bits from directoryMode.
        if chmod(path, directoryMode) < 0 { throw fail("chmod", path) }
    }

    static func fileSize(_ fd: Int32, path: String) throws(RecordStoreError) -> (size: Int, inode: UInt64) {
        var st = Glibc.stat()
        if fstat(fd, &st) < 0 { throw fail("fstat", path) }
        return (Int(st.st_size), UInt64(st.st_ino))
    }

    /// `stat` of a path: nil when it does not exist.
    static func fileStatus(_ path: String) throws(RecordStoreError) -> Glibc.stat? {
        var st = Glibc.stat()
        if stat(path, &st) < 0 {
            if errno == ENOENT { return nil }
            throw fail("stat", path)
        }
        return st
    }

    static func pread(_ fd: Int32, count: Int, offset: Int, path: String) throws(RecordStoreError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let done = try buffer.withUnsafeMutableBytes { raw in
            Result { () throws(RecordStoreError) in try pread(fd, into: raw, offset: offset, path: path) }
        }.get()
        buffer.removeSubrange(done...)
        return buffer
    }

    /// Fills `buffer` from file offset `offset`, short only at the end of the file; the byte count.
    static func pread(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, offset: Int, path: String) throws(RecordStoreError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let n = retrying { Glibc.pread(fd, base + done, buffer.count - done, off_t(offset + done)) }
            if n < 0 { throw fail("read", path) }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Reads a whole file of at most `limit` bytes; nil when it does not exist. A larger file is
    /// not read: it throws ``RecordStoreError/damagedRecord(_:path:reason:)`` saying so (see
    /// ``isOverLimit(_:)``), so no file on disk can make the store allocate more than `limit`.
    static func readFile(_ path: String, limit: Int) throws(RecordStoreError) -> Data? {
        let fd = retrying { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw fail("open", path)
        }
        defer { close(fd) }
        let size = try fileSize(fd, path: path).size
        guard size <= limit else { throw overLimit(path, size: size, limit: limit) }
        // One byte more than the size: a file that grew since fstat is cut at the limit, not read on.
        var bytes = try pread(fd, count: min(size + 1, limit + 1), offset: 0, path: path)
        if bytes.count > limit { throw overLimit(path, size: bytes.count, limit: limit) }
        bytes.removeSubrange(min(bytes.count, size)...)
        return Data(bytes)
    }

    static let overLimitReason = "over the size limit"

    static func overLimit(_ path: String, size: Int, limit: Int) -> RecordStoreError {
        .damagedRecord(nil, path: path, reason: "file of \(size) bytes is \(overLimitReason) of \(limit) bytes; not read")
    }

    /// Whether an error is a file refused by ``readFile(_:limit:)`` for its size.
    static func isOverLimit(_ error: RecordStoreError) -> Bool {
        if case .damagedRecord(_, _, let reason) = error { return reason.contains(overLimitReason) }
        return false
    }

    /// Writes a file by temp file + rename; with `durable`, also fsyncs the file and its directory.
    static func writeFileAtomically(_ path: String, _ bytes: [UInt8], temp: String, durable: Bool) throws(RecordStoreError) {
        try writeFileAtomically(path, temp: temp, durable: durable) { (fd) throws(RecordStoreError) in try writeAll(fd, bytes, path: temp) }
    }

    /// ``writeFileAtomically(_:_:temp:durable:)`` whose bytes `body` writes to the temp file's
    /// descriptor, so that a large file is written in pieces and never held whole in memory.
    static func writeFileAtomically(
        _ path: String, temp: String, durable: Bool, _ body: (Int32) throws(RecordStoreError) -> Void
    ) throws(RecordStoreError) {
        let fd = try open(temp, O_WRONLY | O_CREAT | O_TRUNC)
        do throws(RecordStoreError) {
            try body(fd)
            if durable { try fsync(fd, path: temp) }
            close(fd)
        } catch {
            close(fd)
            try? unlink(temp)
            throw error
        }
        try rename(temp, path)
        if durable { try fsyncPath((path as NSString).deletingLastPathComponent, directory: true) }
    }

    /// Writes `bytes` over the file at `path` in place (creating it), then cuts it to their length.
    static func overwriteFile(_ path: String, _ bytes: [UInt8]) throws(RecordStoreError) {
        let fd = try open(path, O_WRONLY | O_CREAT)
        defer { close(fd) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return retrying { Glibc.pwrite(fd, base + done, raw.count - done, off_t(done)) }
            }
            if n == 0 { throw .io(path: path, operation: "write (no progress)", errno: EIO) }
            if n < 0 { throw fail("write", path) }
            done += n
        }
        try ftruncate(fd, bytes.count, path: path)
    }

    static func ftruncate(_ fd: Int32, _ size: Int, path: String) throws(RecordStoreError) {
        if retrying({ Glibc.ftruncate(fd, off_t(size)) }) < 0 { throw fail("ftruncate", path) }
    }

    /// `flock(2)`, found by name: Swift sees only `struct flock` under that name.
    private static let flockCall: (@convention(c) (Int32, Int32) -> Int32)? = dlsym(nil, "flock").map {
        unsafeBitCast($0, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }

    /// `flock(2)`: `LOCK_EX` waits for the lock.
    static func lock(_ fd: Int32, shared: Bool = false, path: String) throws(RecordStoreError) {
        guard let flockCall else { throw .io(path: path, operation: "flock", errno: ENOSYS) }
        if retrying({ flockCall(fd, shared ? LOCK_SH : LOCK_EX) }) < 0 { throw fail("flock", path) }
    }

    static func unlock(_ fd: Int32) { _ = flockCall?(fd, LOCK_UN) }

    /// `syncfs(2)` (looked up at run time: Glibc hides it behind `_GNU_SOURCE`); falls back to `sync(2)`.
    static func syncfs(_ fd: Int32, path: String) throws(RecordStoreError) {
        typealias SyncFS = @convention(c) (Int32) -> Int32
        if let symbol = dlsym(nil, "syncfs") {
            let call = unsafeBitCast(symbol, to: SyncFS.self)
            if retrying({ call(fd) }) < 0 { throw fail("syncfs", path) }
        } else {
            Glibc.sync()
        }
    }
}

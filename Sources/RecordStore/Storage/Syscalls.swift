import Foundation
import POSIX

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The store's system calls: the ``POSIX`` layer's, failing with
/// ``RecordStoreError/io(path:operation:errno:)`` instead of its ``SystemCallError``.
enum Sys {
    static func fail(_ operation: String, _ path: String) -> RecordStoreError {
        .io(path: path, operation: operation, errno: errno)
    }

    /// The store's error for a failed call of the POSIX layer.
    static func error(_ failure: SystemCallError) -> RecordStoreError {
        .io(path: failure.path, operation: failure.call, errno: failure.errno)
    }

    /// Runs `call`, turning its ``SystemCallError`` into the store's error.
    static func io<T>(_ call: () throws(SystemCallError) -> T) throws(RecordStoreError) -> T {
        do { return try call() } catch { throw Sys.error(error) }
    }

    /// Mode of every file the store creates: the owner's only, whatever the umask.
    static let fileMode = Syscall.privateFileMode
    /// Mode of every directory the store creates.
    static let directoryMode = Syscall.privateDirectoryMode

    /// `open(2)`. A file it creates gets exactly `mode` (`fchmod` undoes a umask that took more).
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t = fileMode) throws(RecordStoreError) -> Int32 {
        try io { () throws(SystemCallError) in try Syscall.open(path, flags, mode) }
    }

    static func close(_ fd: Int32) { Syscall.close(fd) }

    /// Writes all of `bytes` (looping over short writes).
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(RecordStoreError) {
        try io { () throws(SystemCallError) in try Syscall.writeAll(fd, bytes, path: path) }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(RecordStoreError) {
        try io { () throws(SystemCallError) in try Syscall.writeAll(fd, bytes, path: path) }
    }

    static func fsync(_ fd: Int32, path: String) throws(RecordStoreError) {
        try io { () throws(SystemCallError) in try Syscall.fsync(fd, path: path) }
    }

    static func fsyncPath(_ path: String, directory: Bool = false) throws(RecordStoreError) {
        if directory { return try io { () throws(SystemCallError) in try Syscall.syncDirectory(path) } }
        let fd = try open(path, O_RDONLY)
        defer { close(fd) }
        try fsync(fd, path: path)
    }

    static func rename(_ from: String, _ to: String) throws(RecordStoreError) {
        try io { () throws(SystemCallError) in try Syscall.rename(from, to) }
    }

    /// Removes a file; a missing file is not an error.
    static func unlink(_ path: String) throws(RecordStoreError) {
        try io { () throws(SystemCallError) in try Syscall.unlink(path) }
    }

    /// Creates a directory with ``directoryMode`` (exactly, whatever the umask); an existing one is not an error.
    static func mkdir(_ path: String) throws(RecordStoreError) {
        try io { () throws(SystemCallError) in try AtomicFile.makeDirectory(path, durable: false) }
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
        try io { () throws(SystemCallError) in try Syscall.read(fd, count: count, at: Int64(offset), path: path) }
    }

    /// Fills `buffer` from file offset `offset`, short only at the end of the file; the byte count.
    static func pread(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, offset: Int, path: String) throws(RecordStoreError) -> Int {
        try io { () throws(SystemCallError) in try Syscall.readAll(fd, into: buffer, at: Int64(offset), path: path) }
    }

    /// Reads a whole file of at most `limit` bytes; nil when it does not exist. A larger file is
    /// not read: it throws ``RecordStoreError/damagedRecord(_:path:reason:)`` saying so (see
    /// ``isOverLimit(_:)``), so no file on disk can make the store allocate more than `limit`.
    static func readFile(_ path: String, limit: Int) throws(RecordStoreError) -> Data? {
        let fd = Syscall.retrying { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
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
        try AtomicFile.write(path, temp: temp, durable: durable, error: Sys.error, body)
    }

    /// Writes `bytes` over the file at `path` in place (creating it), then cuts it to their length.
    static func overwriteFile(_ path: String, _ bytes: [UInt8]) throws(RecordStoreError) {
        let fd = try open(path, O_WRONLY | O_CREAT)
        defer { close(fd) }
        try io { () throws(SystemCallError) in
            try Syscall.writeAll(fd, bytes, at: 0, path: path)
            try Syscall.ftruncate(fd, Int64(bytes.count), path: path)
        }
    }

    static func ftruncate(_ fd: Int32, _ size: Int, path: String) throws(RecordStoreError) {
        try io { () throws(SystemCallError) in try Syscall.ftruncate(fd, Int64(size), path: path) }
    }

    /// `flock(2)`: `LOCK_EX` waits for the lock.
    static func lock(_ fd: Int32, shared: Bool = false, path: String) throws(RecordStoreError) {
        try io { () throws(SystemCallError) in try Syscall.lock(fd, shared: shared, path: path) }
    }

    static func unlock(_ fd: Int32) { Syscall.unlock(fd) }

    /// `syncfs(2)`; `sync(2)` where the C library has no `syncfs`.
    static func syncfs(_ fd: Int32, path: String) throws(RecordStoreError) {
        try io { () throws(SystemCallError) in try Syscall.syncFileSystem(fd, path: path) }
    }
}

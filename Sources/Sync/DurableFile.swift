import Foundation
import POSIX

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Whole-file replacement that survives `kill -9` and power loss (``POSIX/AtomicFile``: temp
/// file beside the target, fsync, rename, fsync of the directory), with the sync engine's errors.
enum DurableFile {
    /// Replaces the file at `path` with `data` (mode 0600).
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` naming the failing call and errno.
    static func write(_ data: Data, to path: String) throws(SyncError) {
        let temp = path + ".tmp-\(getpid())"
        // A failure of the temp file names the target, as the rest of the sync engine's errors do.
        func mapped(_ error: SystemCallError) -> SyncError { failure(error, reportingAs: error.path == temp ? path : nil) }
        try AtomicFile.write(path, temp: temp, error: mapped) { (fd) throws(SyncError) in
            try writeAll(fd, data, reportingAs: path, temp: temp)
        }
    }

    /// Creates (or truncates) the file `temp` (mode 0600) holding `data`; returns it open for
    /// writing. On failure it is closed and removed.
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` naming `path`, the call and errno.
    static func create(_ temp: String, _ data: Data, reportingAs path: String) throws(SyncError) -> Int32 {
        let fd = try call(reportingAs: path) { () throws(SystemCallError) in try Syscall.open(temp, O_WRONLY | O_CREAT | O_TRUNC) }
        do { try writeAll(fd, data, reportingAs: path, temp: temp) } catch {
            Syscall.close(fd)
            try? Syscall.unlink(temp)
            throw error
        }
        return fd
    }

    private static func writeAll(_ fd: Int32, _ data: Data, reportingAs path: String, temp: String) throws(SyncError) {
        try call(reportingAs: path) { () throws(SystemCallError) in
            try data.withUnsafeBytes { bytes in Result { () throws(SystemCallError) in try Syscall.writeAll(fd, bytes, path: temp) } }.get()
        }
    }

    /// Makes `path` a directory (mode 0700) unless it is one; a directory it makes is made durable
    /// (its parent fsynced), so that files renamed into it later cannot outlive it.
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    static func makeDirectory(_ path: String) throws(SyncError) {
        try call { () throws(SystemCallError) in try AtomicFile.makeDirectory(path) }
    }

    /// fsync(2) of the directory at `path`: makes the renames and unlinks done in it durable.
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    static func syncDirectory(_ path: String) throws(SyncError) {
        try call { () throws(SystemCallError) in try Syscall.syncDirectory(path) }
    }

    /// syncfs(2) of the filesystem holding the directory at `path`: every write to it so far is
    /// durable when this returns.
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    static func syncFileSystem(_ path: String) throws(SyncError) {
        try call { () throws(SystemCallError) in
            let fd = try Syscall.open(path, O_RDONLY | O_DIRECTORY)
            defer { Syscall.close(fd) }
            try Syscall.syncFileSystem(fd, path: path)
        }
    }

    /// Runs `body`, turning its ``SystemCallError`` into the sync engine's error, which names
    /// `path` when given (the target of a temp file), else the path the call failed on.
    static func call<T>(reportingAs path: String? = nil, _ body: () throws(SystemCallError) -> T) throws(SyncError) -> T {
        do { return try body() } catch { throw failure(error, reportingAs: path) }
    }

    /// The sync engine's error for a failed call.
    static func failure(_ error: SystemCallError, reportingAs path: String? = nil) -> SyncError {
        .state(path: path ?? error.path, reason: "\(error.call): \(error.reason)")
    }

    /// The error of the C call `call` on `path`, from `errno`.
    static func failure(_ path: String, _ call: String) -> SyncError {
        failure(.current(call, path: path))
    }
}

/// Replaces and removes many files of one directory durably, with one flush for all of them:
/// each file is written to a temp file beside it (`<name>.tmp-<pid>`); ``commit()`` makes all of
/// them durable — an fsync each for up to ``fsyncLimit`` files (a save of one record must not
/// wait for everything else the machine wrote), one syncfs(2) for more (instead of an fsync a
/// file: a batch of 200 took twice as long fsynced one by one) — and only then renames each over
/// its target, unlinks the removed files, and fsyncs the directory once. After `commit` returns,
/// every replacement and removal is durable; a `kill -9` or power loss before then leaves each
/// file either as it was or as replaced, never torn (and perhaps a temp file beside it).
///
/// A failed call removes the temp files not renamed yet; files already renamed stay replaced.
struct DurableFileBatch {
    /// Up to this many files are fsynced one by one, more by one syncfs.
    static let fsyncLimit = 8

    let directory: String
    /// The temp files written, with their descriptors while there are at most ``fsyncLimit``.
    private var written: [(temp: String, path: String, fd: Int32?)] = []
    private var removals: [String] = []

    init(directory: String) { self.directory = directory }

    /// Writes `data` (mode 0600) as the new content of the file `name` of the directory.
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` naming the failing call and errno.
    mutating func write(_ data: Data, named name: String) throws(SyncError) {
        let path = directory + "/" + name
        let temp = path + ".tmp-\(getpid())"
        let fd: Int32
        do { fd = try DurableFile.create(temp, data, reportingAs: path) } catch {
            abandon()
            throw error
        }
        let keep = written.count < Self.fsyncLimit
        written.append((temp, path, keep ? fd : nil))
        if !keep {
            Syscall.close(fd)
            if written.count == Self.fsyncLimit + 1 { closeAll() }  // syncfs at commit: no descriptor needed
        }
    }

    /// Removes the file `name` of the directory at ``commit()`` (nothing when there is none).
    mutating func remove(named name: String) { removals.append(directory + "/" + name) }

    /// fsyncs or syncfs, then the renames and unlinks, then an fsync of the directory: all of it
    /// is durable when this returns.
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    mutating func commit() throws(SyncError) {
        do throws(SyncError) {
            if written.count > Self.fsyncLimit {
                try DurableFile.syncFileSystem(directory)
            } else {
                for file in written {
                    try DurableFile.call(reportingAs: file.path) { () throws(SystemCallError) in
                        try Syscall.fsync(file.fd ?? -1, path: file.path)
                    }
                }
            }
        } catch {
            abandon()
            throw error
        }
        closeAll()
        let files = written
        written = []
        for (index, file) in files.enumerated() {
            do throws(SystemCallError) { try Syscall.rename(file.temp, file.path) } catch {
                for rest in files[index...] { try? Syscall.unlink(rest.temp) }
                throw DurableFile.failure(error)
            }
        }
        for path in removals { try DurableFile.call { () throws(SystemCallError) in try Syscall.unlink(path) } }
        removals = []
        try DurableFile.syncDirectory(directory)
    }

    /// Removes the temp files not renamed yet (when the caller gives up on the batch).
    mutating func abandon() {
        closeAll()
        for file in written { try? Syscall.unlink(file.temp) }
        written = []
    }

    private mutating func closeAll() {
        for index in written.indices {
            if let fd = written[index].fd { Syscall.close(fd) }
            written[index].fd = nil
        }
    }
}

import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Whole-file replacement that survives `kill -9` and power loss: write a temp file beside the
/// target, fsync it, rename it over the target, fsync the directory (as git's lockfile does).
enum DurableFile {
    /// Replaces the file at `path` with `data` (mode 0600).
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` naming the failing call and errno.
    static func write(_ data: Data, to path: String) throws(SyncError) {
        let temp = path + ".tmp-\(getpid())"
        let fd = try create(temp, data, reportingAs: path)
        guard fsync(fd) == 0 else {
            let error = failure(path, "fsync")
            close(fd)
            unlink(temp)
            throw error
        }
        close(fd)
        guard rename(temp, path) == 0 else {
            let error = failure(path, "rename")
            unlink(temp)
            throw error
        }
        try syncDirectory((path as NSString).deletingLastPathComponent)
    }

    /// Creates (or truncates) the file `temp` (mode 0600) holding `data`; returns it open for
    /// writing. On failure it is closed and removed.
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` naming `path`, the call and errno.
    static func create(_ temp: String, _ data: Data, reportingAs path: String) throws(SyncError) -> Int32 {
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure(path, "open") }
        var offset = 0
        let ok = data.withUnsafeBytes { buffer -> Bool in
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
        guard ok else {
            let error = failure(path, "write")
            close(fd)
            unlink(temp)
            throw error
        }
        return fd
    }

    /// Makes `path` a directory (mode 0700) unless it is one; a directory it makes is made durable
    /// (its parent fsynced), so that files renamed into it later cannot outlive it.
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    static func makeDirectory(_ path: String) throws(SyncError) {
        if mkdir(path, 0o700) == 0 {
            try syncDirectory((path as NSString).deletingLastPathComponent)
        } else if errno != EEXIST {
            throw failure(path, "mkdir")
        }
    }

    /// fsync(2) of the directory at `path`: makes the renames and unlinks done in it durable.
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    static func syncDirectory(_ path: String) throws(SyncError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(path, "open directory") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw failure(path, "fsync directory") }
    }

    /// syncfs(2) of the filesystem holding the directory at `path`: every write to it so far is
    /// durable when this returns. Looked up at run time (Glibc declares it only under
    /// `_GNU_SOURCE`, as RecordStore's `Sys.syncfs` does); falls back to sync(2).
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    static func syncFileSystem(_ path: String) throws(SyncError) {
        typealias SyncFS = @convention(c) (Int32) -> Int32
        guard let symbol = dlsym(nil, "syncfs") else { return sync() }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(path, "open directory") }
        defer { close(fd) }
        while unsafeBitCast(symbol, to: SyncFS.self)(fd) != 0 {
            guard errno == EINTR else { throw failure(path, "syncfs") }
        }
    }

    /// The error of the C call `call` on `path`, from `errno`.
    static func failure(_ path: String, _ call: String) -> SyncError {
        .state(path: path, reason: "\(call): \(String(cString: strerror(errno)))")
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
            close(fd)
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
                for file in written where fsync(file.fd ?? -1) != 0 { throw DurableFile.failure(file.path, "fsync") }
            }
        } catch {
            abandon()
            throw error
        }
        closeAll()
        let files = written
        written = []
        for (index, file) in files.enumerated() where rename(file.temp, file.path) != 0 {
            let error = DurableFile.failure(file.path, "rename")
            for rest in files[index...] { unlink(rest.temp) }
            throw error
        }
        for path in removals where unlink(path) != 0 && errno != ENOENT { throw DurableFile.failure(path, "unlink") }
        removals = []
        try DurableFile.syncDirectory(directory)
    }

    /// Removes the temp files not renamed yet (when the caller gives up on the batch).
    mutating func abandon() {
        closeAll()
        for file in written { unlink(file.temp) }
        written = []
    }

    private mutating func closeAll() {
        for index in written.indices {
            if let fd = written[index].fd { close(fd) }
            written[index].fd = nil
        }
    }
}

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
        var batch = DurableFileBatch(directory: (path as NSString).deletingLastPathComponent)
        try batch.write(data, named: (path as NSString).lastPathComponent)
        try batch.commit()
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

    /// The error of the C call `call` on `path`, from `errno`.
    static func failure(_ path: String, _ call: String) -> SyncError {
        .state(path: path, reason: "\(call): \(String(cString: strerror(errno)))")
    }
}

/// Replaces and removes many files of one directory durably, with one flush for all of them
/// instead of one a file: each file is written to a temp file beside it; the temp files are
/// fsynced together (up to ``openLimit`` at a time, after all of them are written) and only then
/// renamed over their targets; ``commit()`` unlinks the removed files and fsyncs the directory
/// once. After `commit` returns, every replacement and removal is durable; a `kill -9` or power
/// loss before then leaves each file either as it was or as replaced, never torn (a leftover
/// temp file is named `<name>.tmp-<pid>`).
///
/// A failed call removes the temp files it made; files already renamed stay replaced.
struct DurableFileBatch {
    /// Temp files written and not yet fsynced, at most this many open at a time.
    static let openLimit = 64

    let directory: String
    private var written: [(fd: Int32, temp: String, path: String)] = []
    private var removals: [String] = []

    init(directory: String) { self.directory = directory }

    /// Writes `data` (mode 0600) as the new content of the file `name` of the directory.
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` naming the failing call and errno.
    mutating func write(_ data: Data, named name: String) throws(SyncError) {
        let path = directory + "/" + name
        let temp = path + ".tmp-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let error = DurableFile.failure(path, "open")
            abandon()
            throw error
        }
        written.append((fd, temp, path))
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
            let error = DurableFile.failure(path, "write")
            abandon()
            throw error
        }
        if written.count >= Self.openLimit { try flush() }
    }

    /// Removes the file `name` of the directory at ``commit()`` (nothing when there is none).
    mutating func remove(named name: String) { removals.append(directory + "/" + name) }

    /// Renames every written file over its target, unlinks the removed ones, then fsyncs the
    /// directory: all of it is durable when this returns.
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    mutating func commit() throws(SyncError) {
        try flush()
        for path in removals where unlink(path) != 0 && errno != ENOENT { throw DurableFile.failure(path, "unlink") }
        removals = []
        try DurableFile.syncDirectory(directory)
    }

    /// fsyncs the open temp files (their contents reach the disk before any rename makes them
    /// visible), then renames each over its target.
    private mutating func flush() throws(SyncError) {
        for file in written where fsync(file.fd) != 0 {
            let error = DurableFile.failure(file.path, "fsync")
            abandon()
            throw error
        }
        for file in written { close(file.fd) }
        let files = written
        written = []
        for (index, file) in files.enumerated() where rename(file.temp, file.path) != 0 {
            let error = DurableFile.failure(file.path, "rename")
            for rest in files[index...] { unlink(rest.temp) }
            throw error
        }
    }

    /// Closes and removes the temp files not renamed yet (when the caller gives up on the batch).
    mutating func abandon() {
        for file in written {
            close(file.fd)
            unlink(file.temp)
        }
        written = []
    }
}

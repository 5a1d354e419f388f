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
        let directory = (path as NSString).deletingLastPathComponent
        let temp = path + ".tmp-\(getpid())"
        func failure(_ call: String) -> SyncError { .state(path: path, reason: "\(call): \(String(cString: strerror(errno)))") }
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("open") }
        var written = 0
        let ok = data.withUnsafeBytes { buffer -> Bool in
            while written < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + written, buffer.count - written)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return false }
                written += n
            }
            return true
        }
        guard ok, fsync(fd) == 0 else {
            let error = failure(ok ? "fsync" : "write")
            close(fd)
            unlink(temp)
            throw error
        }
        close(fd)
        guard rename(temp, path) == 0 else {
            let error = failure("rename")
            unlink(temp)
            throw error
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw failure("open directory") }
        defer { close(directoryFD) }
        guard fsync(directoryFD) == 0 else { throw failure("fsync directory") }
    }

    /// Makes `path` a directory (mode 0700) unless it is one.
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    static func makeDirectory(_ path: String) throws(SyncError) {
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw .state(path: path, reason: "mkdir: \(String(cString: strerror(errno)))")
        }
    }
}

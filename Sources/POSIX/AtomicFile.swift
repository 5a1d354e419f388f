#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Whole-file replacement that a `kill -9` or a power loss never leaves torn: the bytes go to a
/// temp file beside the target, which is fsynced, renamed over the target, and the directory
/// fsynced (as git's lockfile does). After a crash the target is the old file or the new one,
/// and perhaps a temp file is left beside it for its owner to remove when it next loads.
public enum AtomicFile {
    /// Replaces the file at `path` with what `body` writes to the descriptor of `temp` (created
    /// or truncated, mode `mode` exactly, in `path`'s directory), so a large file can be written in
    /// pieces. With `durable` false the fsyncs are left out: the replacement is still whole, but
    /// may not survive a power loss. On failure the temp file is removed.
    ///
    /// - Throws: `body`'s error, or a failed call's ``SystemCallError`` turned into `E` by `error`.
    public static func write<E: Error>(
        _ path: String, temp: String, durable: Bool = true, mode: mode_t = Syscall.privateFileMode,
        error mapError: (SystemCallError) -> E, _ body: (Int32) throws(E) -> Void
    ) throws(E) {
        let fd: Int32
        do { fd = try Syscall.open(temp, O_WRONLY | O_CREAT | O_TRUNC, mode) } catch { throw mapError(error) }
        do throws(E) {
            try body(fd)
            if durable {
                do { try Syscall.fsync(fd, path: temp) } catch { throw mapError(error) }
            }
            Syscall.close(fd)
        } catch {
            Syscall.close(fd)
            try? Syscall.unlink(temp)
            throw error
        }
        do throws(SystemCallError) {
            do throws(SystemCallError) { try Syscall.rename(temp, path) } catch {
                try? Syscall.unlink(temp)
                throw error
            }
            if durable { try Syscall.syncDirectory(directory(of: path)) }
        } catch { throw mapError(error) }
    }

    /// Replaces the file at `path` with `bytes`, as ``write(_:temp:durable:mode:error:_:)`` does.
    ///
    /// - Throws: ``SystemCallError`` of the failed call.
    public static func write(
        _ path: String, _ bytes: [UInt8], temp: String, durable: Bool = true, mode: mode_t = Syscall.privateFileMode
    ) throws(SystemCallError) {
        func unchanged(_ error: SystemCallError) -> SystemCallError { error }
        try write(path, temp: temp, durable: durable, mode: mode, error: unchanged) { (fd) throws(SystemCallError) in
            try Syscall.writeAll(fd, bytes, path: temp)
        }
    }

    /// Creates `path` as a directory (mode `mode` exactly) unless one is there; a directory it
    /// creates is made durable (its parent fsynced), so that files renamed into it later cannot
    /// outlive it. Something else at `path` is not an error here: opening a file in it fails.
    ///
    /// - Throws: ``SystemCallError`` of `mkdir`, `chmod` or the parent's fsync.
    public static func makeDirectory(_ path: String, mode: mode_t = Syscall.privateDirectoryMode, durable: Bool = true)
        throws(SystemCallError)
    {
        if Glibc.mkdir(path, mode) < 0 {
            if errno != EEXIST { throw .current("mkdir", path: path) }
            return
        }
        // The umask may have taken bits from `mode`.
        if mode & ~Syscall.processUmask != mode, chmod(path, mode) < 0 { throw .current("chmod", path: path) }
        if durable { try Syscall.syncDirectory(directory(of: path)) }
    }

    /// The directory part of `path` (`.` for a bare name), as `dirname(3)` gives it.
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = path[..<slash]
        return parent.isEmpty ? "/" : String(parent)
    }
}

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Whole reads and writes: `read`/`pread` and `write`/`pwrite` looped over short counts and `EINTR`.
extension Syscall {
    /// Writes all of `bytes`: with `offset`, `pwrite(2)` from there; without, `write(2)` from the
    /// descriptor's offset. Short writes and `EINTR` are looped.
    ///
    /// - Throws: ``SystemCallError`` of `write` naming `path` (`EIO` when a write makes no progress).
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64? = nil, path: String) throws(SystemCallError)
    {
        guard let base = bytes.baseAddress else { return }
        let done = try whole(bytes.count, "write", path: path) { done in
            if let offset {
                Glibc.pwrite(fd, base + done, bytes.count - done, off_t(offset + Int64(done)))
            } else {
                Glibc.write(fd, base + done, bytes.count - done)
            }
        }
        if done < bytes.count { throw SystemCallError("write", path: path, errno: EIO) }
    }

    /// ``writeAll(_:_:at:path:)`` of an array's bytes.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int64? = nil, path: String) throws(SystemCallError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(SystemCallError) in try writeAll(fd, raw, at: offset, path: path) } }.get()
    }

    /// Fills `buffer`, short only at the end of the file: with `offset`, `pread(2)` from there;
    /// without, `read(2)` from the descriptor's offset. Returns the byte count.
    ///
    /// - Throws: ``SystemCallError`` of `read` naming `path`.
    public static func readAll(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64? = nil, path: String)
        throws(SystemCallError) -> Int
    {
        guard let base = buffer.baseAddress else { return 0 }
        return try whole(buffer.count, "read", path: path) { done in
            if let offset {
                Glibc.pread(fd, base + done, buffer.count - done, off_t(offset + Int64(done)))
            } else {
                Glibc.read(fd, base + done, buffer.count - done)
            }
        }
    }

    /// Calls `step` with the byte count done so far, adding what it returns, until `count` bytes
    /// are done or it returns 0 (the end of the file, or no progress); each call retried on `EINTR`.
    private static func whole(_ count: Int, _ call: String, path: String, _ step: (Int) -> Int) throws(SystemCallError) -> Int {
        var done = 0
        while done < count {
            let n = retrying { step(done) }
            if n < 0 { throw .current(call, path: path) }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Up to `count` bytes (fewer only at the end of the file), as ``readAll(_:into:at:path:)`` reads them.
    ///
    /// - Throws: ``SystemCallError`` of `read` naming `path`.
    public static func read(_ fd: Int32, count: Int, at offset: Int64? = nil, path: String) throws(SystemCallError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let done = try bytes.withUnsafeMutableBytes { raw in
            Result { () throws(SystemCallError) in try readAll(fd, into: raw, at: offset, path: path) }
        }.get()
        bytes.removeSubrange(done...)
        return bytes
    }

    /// Everything `fd` gives from its offset until the end of the file (a pipe closed, a `/proc`
    /// file read through), at most `limit` bytes.
    ///
    /// - Throws: ``SystemCallError`` of `read` naming `path`.
    public static func readToEnd(_ fd: Int32, limit: Int, path: String) throws(SystemCallError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(limit, 4096))
        while bytes.count < limit {
            let want = min(chunk.count, limit - bytes.count)
            let n = chunk.withUnsafeMutableBytes { raw in retrying { Glibc.read(fd, raw.baseAddress, want) } }
            if n < 0 { throw .current("read", path: path) }
            if n == 0 { break }
            bytes += chunk[..<n]
        }
        return bytes
    }

    /// The next data extent `[start, end)` of the file open at `fd` at or after `offset`, clipped to
    /// `size` (`lseek(SEEK_DATA)`, then `SEEK_HOLE`): `start == size` when only a hole is left. A
    /// file system without `SEEK_DATA` (`EINVAL`) counts as all data. Moves `fd`'s file offset.
    public static func dataExtent(_ fd: Int32, from offset: Int64, size: Int64) -> (start: Int64, end: Int64) {
        // Linux's SEEK_DATA and SEEK_HOLE (not visible without _GNU_SOURCE).
        let seekData: Int32 = 3
        let seekHole: Int32 = 4
        let data = Int64(Glibc.lseek(fd, off_t(offset), seekData))
        if data < 0 { return errno == ENXIO ? (size, size) : (offset, size) }
        let start = min(max(data, offset), size)
        let hole = Int64(Glibc.lseek(fd, off_t(start), seekHole))
        let end = hole <= start ? size : min(hole, size)
        return (start, end)
    }
}

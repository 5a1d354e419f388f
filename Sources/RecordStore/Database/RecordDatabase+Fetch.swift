import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

extension RecordDatabase {
    /// Fetches one full record.
    ///
    /// - Throws: ``RecordStoreError/unknownItem(_:)``, or ``RecordStoreError/damagedRecord(_:path:reason:)``
    ///   when its file is damaged (the rest of the database stays usable).
    public func record(for id: RecordID) throws(RecordStoreError) -> Record {
        guard state.withLock({ $0.index.entries[id.recordName] != nil }) else { throw .unknownItem(id) }
        do {
            return try readRecordFile(id)
        } catch {
            if case .damagedRecord = error { log(error.description) }
            throw error
        }
    }

    /// Reads a record file; one that looks damaged is read again under a shared commit lock, since
    /// a commit in another process may have been overwriting it (see ``redo(_:layout:verify:)``).
    func readRecordFile(_ id: RecordID) throws(RecordStoreError) -> Record {
        do {
            return try RecordFiles.read(id, layout: layout)
        } catch {
            guard case .damagedRecord = error else { throw error }
            let fd = try Sys.open(layout.lockFile, O_RDONLY)
            defer { Sys.close(fd) }
            try Sys.lock(fd, shared: true, path: layout.lockFile)
            defer { Sys.unlock(fd) }
            return try RecordFiles.read(id, layout: layout)
        }
    }

    /// Fetches several records, each with its own result, as `CKFetchRecordsOperation`.
    public func records(for ids: [RecordID]) -> [RecordID: Result<Record, RecordStoreError>] {
        var results: [RecordID: Result<Record, RecordStoreError>] = [:]
        for id in ids {
            do { results[id] = .success(try record(for: id)) } catch { results[id] = .failure(error) }
        }
        return results
    }

    /// The in-memory metadata of a record (no file read); nil when it does not exist.
    public func metadata(for id: RecordID) -> RecordMetadata? {
        state.withLock { $0.index.entries[id.recordName] }
    }

    /// The metadata of the record with this identity; nil when none has it.
    public func metadata(identity: UInt64) -> RecordMetadata? {
        state.withLock { state in state.index.names[identity].flatMap { state.index.entries[$0] } }
    }

    /// Metadata of the records that reference `target` through field `key` (the reference index: no scan).
    public func referrers(to target: RecordID, key: String) -> [RecordMetadata] {
        state.withLock { state in
            (state.index.referrers[target.recordName]?[key] ?? []).compactMap { state.index.entries[$0] }
        }
    }

    /// Number of records in the database.
    public var recordCount: Int { state.withLock { $0.index.entries.count } }

    // MARK: Assets

    /// Stores `data` as an asset (by SHA-256; storing the same bytes twice stores them once).
    /// Durable at the next ``sync()``.
    public func makeAsset(_ data: Data) throws(RecordStoreError) -> Asset {
        let hash = SHA256.hexDigest(data)
        let path = layout.assetPath(hash)
        if try Sys.fileStatus(path) == nil {
            try Sys.mkdir((path as NSString).deletingLastPathComponent)
            try Sys.writeFileAtomically(path, [UInt8](data), temp: RecordFiles.tempPath(layout), durable: false)
            state.withLock { $0.unsyncedAssets.append(path) }
        }
        return Asset(sha256: hash, size: Int64(data.count))
    }

    /// Stores the first `size` bytes of the file open at `fd` as an asset, streamed and sparse:
    /// only the source's data extents (found with `lseek(SEEK_DATA/SEEK_HOLE)`) are read, in 1 MiB
    /// chunks with `pread` (short reads looped), hashed and written at their offsets to a temp file
    /// that is then extended to `size` with `ftruncate` and renamed into place. Holes are hashed as
    /// zeros without being read or written, so `truncate -s 10G` costs no I/O and no disk beyond its
    /// data, and memory does not grow with `size`.
    /// - Throws: `.io` when `fd` ends before `size` bytes or the copy cannot be written.
    public func makeAsset(readingFrom fd: Int32, size: Int64) throws(RecordStoreError) -> Asset {
        var st = Glibc.stat()
        if Sys.retrying({ Glibc.fstat(fd, &st) }) < 0 { throw Sys.fail("fstat", "asset source") }
        if Int64(st.st_size) < size { throw .io(path: "asset source", operation: "pread (file ended early)", errno: EIO) }
        let temp = RecordFiles.tempPath(layout)
        let out = try Sys.open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        var keep = false
        defer {
            Sys.close(out)
            if !keep { try? Sys.unlink(temp) }
        }
        var hasher = SHA256.Hasher()
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while offset < size {
            let (dataStart, dataEnd) = Self.dataExtent(fd, from: offset, size: size)
            if dataStart > offset {
                // A hole: zeros in the hash, nothing read or written (the ftruncate below makes it).
                buffer.initializeMemory(as: UInt8.self, repeating: 0)
                while offset < dataStart {
                    let count = Int(min(Int64(chunk), dataStart - offset))
                    hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                    offset += Int64(count)
                }
            }
            if dataEnd > offset, Sys.retrying({ Glibc.lseek(out, off_t(offset), SEEK_SET) }) < 0 { throw Sys.fail("lseek", temp) }
            while offset < dataEnd {
                let want = Int(min(Int64(chunk), dataEnd - offset))
                let n = Sys.retrying { Glibc.pread(fd, buffer.baseAddress, want, off_t(offset)) }
                if n < 0 { throw Sys.fail("pread", "asset source") }
                if n == 0 { throw .io(path: "asset source", operation: "pread (file ended early)", errno: EIO) }
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
                hasher.update(bytes)
                try Sys.writeAll(out, bytes, path: temp)
                offset += Int64(n)
            }
        }
        if Sys.retrying({ Glibc.ftruncate(out, off_t(size)) }) < 0 { throw Sys.fail("ftruncate", temp) }
        let hash = SHA256.hex(hasher.finalize())
        let path = layout.assetPath(hash)
        if try Sys.fileStatus(path) == nil {
            try Sys.mkdir((path as NSString).deletingLastPathComponent)
            try Sys.rename(temp, path)
            keep = true
            state.withLock { $0.unsyncedAssets.append(path) }
        }
        return Asset(sha256: hash, size: size)
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

    /// The bytes of an asset.
    public func assetData(_ asset: Asset) throws(RecordStoreError) -> Data {
        let path = layout.assetPath(asset.sha256)
        guard let data = try Sys.readFile(path) else {
            throw .damagedRecord(nil, path: path, reason: "asset file is missing")
        }
        return data
    }

    /// The database's directory for temp files (same filesystem as the assets; cleared at open).
    /// Callers may create their own temp files here, e.g. unlinked buffers for large open files.
    public var temporaryDirectoryPath: String { layout.temp }

    /// Where an asset's bytes are on disk (read-only: never write there).
    public func assetPath(_ asset: Asset) -> String { layout.assetPath(asset.sha256) }
}

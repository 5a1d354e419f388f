import Foundation
import POSIX

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Assets are files `assets/xx/<sha256>` shared by every record that uses the same bytes, and
/// collected once no record uses them:
///
/// - The index counts the live records using each asset (``RecordIndex/assetReferences``).
/// - An asset made by ``RecordDatabase/makeAsset(_:)`` and not saved yet is *pinned*: a hard link
///   `tmp/<pid>-pin-<sha256>` to its bytes, listed in ``DatabaseState/pins``. A commit that saves
///   it relinks the asset from the pin if another process collected it meanwhile, then drops the
///   pin. So no record is ever committed whose asset is gone.
/// - A commit that takes an asset's count to zero marks it collectable; ``RecordDatabase/sync()``
///   unlinks it after the journal is durable, under the commit lock, once caught up with other
///   processes, if the count is still zero and this process holds no pin.
/// - What a crash leaves (an asset made and never saved, a deleted asset not yet unlinked) is an
///   orphan: swept at open and at every checkpoint when older than ``assetGracePeriod`` (so that
///   another process's just-made asset is safe even before it pins it).
extension RecordDatabase {
    /// How old an unused asset file must be before the orphan sweep and `fsck` count it as orphaned.
    public static let assetGracePeriod: TimeInterval = 300

    /// Stores `data` as an asset (by SHA-256; storing the same bytes twice stores them once).
    /// Durable at the next ``sync()``; pinned (safe from collection) until a commit saves it.
    public func makeAsset(_ data: Data) throws(RecordStoreError) -> Asset {
        guard !isReadOnly else { throw .readOnly(path: path) }
        let hash = SHA256.hexDigest(data)
        if try !pinExisting(hash) {
            let temp = RecordFiles.tempPath(layout)
            let out = try Sys.open(temp, O_WRONLY | O_CREAT | O_EXCL)
            let written = Result { () throws(RecordStoreError) in try Sys.writeAll(out, [UInt8](data), path: temp) }
            Sys.close(out)
            do throws(RecordStoreError) {
                try written.get()
                try store(hash, from: temp)
            } catch {
                try? Sys.unlink(temp)
                throw error
            }
        }
        return Asset(sha256: hash, size: Int64(data.count))
    }

    /// Stores the first `size` bytes of the file open at `fd` as an asset, streamed and sparse:
    /// only the source's data extents (found with `lseek(SEEK_DATA/SEEK_HOLE)`) are read, in 1 MiB
    /// chunks with `pread` (short reads looped), hashed and written at their offsets to a temp file
    /// that is then extended to `size` with `ftruncate` and becomes the asset. Holes are hashed as
    /// zeros without being read or written, so `truncate -s 10G` costs no I/O and no disk beyond its
    /// data, and memory does not grow with `size`.
    /// - Throws: `.io` when `fd` ends before `size` bytes or the copy cannot be written.
    public func makeAsset(readingFrom fd: Int32, size: Int64) throws(RecordStoreError) -> Asset {
        guard !isReadOnly else { throw .readOnly(path: path) }
        var st = Glibc.stat()
        if Syscall.retrying({ Glibc.fstat(fd, &st) }) < 0 { throw Sys.fail("fstat", "asset source") }
        if Int64(st.st_size) < size { throw .io(path: "asset source", operation: "pread (file ended early)", errno: EIO) }
        let temp = RecordFiles.tempPath(layout)
        let out = try Sys.open(temp, O_WRONLY | O_CREAT | O_EXCL)
        var stored = false
        defer { if !stored { try? Sys.unlink(temp) } }
        defer { Sys.close(out) }
        var hasher = SHA256.Hasher()
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while offset < size {
            let (dataStart, dataEnd) = Syscall.dataExtent(fd, from: offset, size: size)
            if dataStart > offset {
                // A hole: zeros in the hash, nothing read or written (the ftruncate below makes it).
                buffer.initializeMemory(as: UInt8.self, repeating: 0)
                while offset < dataStart {
                    let count = Int(min(Int64(chunk), dataStart - offset))
                    hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                    offset += Int64(count)
                }
            }
            if dataEnd > offset, Syscall.retrying({ Glibc.lseek(out, off_t(offset), SEEK_SET) }) < 0 { throw Sys.fail("lseek", temp) }
            while offset < dataEnd {
                let want = Int(min(Int64(chunk), dataEnd - offset))
                let n = Syscall.retrying { Glibc.pread(fd, buffer.baseAddress, want, off_t(offset)) }
                if n < 0 { throw Sys.fail("pread", "asset source") }
                if n == 0 { throw .io(path: "asset source", operation: "pread (file ended early)", errno: EIO) }
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
                hasher.update(bytes)
                try Sys.writeAll(out, bytes, path: temp)
                offset += Int64(n)
            }
        }
        if Syscall.retrying({ Glibc.ftruncate(out, off_t(size)) }) < 0 { throw Sys.fail("ftruncate", temp) }
        let hash = SHA256.hex(hasher.finalize())
        if try !pinExisting(hash) { try store(hash, from: temp) }
        stored = true
        try? Sys.unlink(temp)
        return Asset(sha256: hash, size: size)
    }

    private func pinPath(_ hash: String) -> String { "\(layout.temp)/\(getpid())-pin-\(hash)" }

    /// Pins an asset whose file exists (a hard link from the pin to it); false when there is no such file.
    private func pinExisting(_ hash: String) throws(RecordStoreError) -> Bool {
        if state.withLock({ $0.pins[hash] != nil }) {
            if try Sys.fileStatus(layout.assetPath(hash)) != nil { return true }
        }
        let pin = pinPath(hash)
        if link(layout.assetPath(hash), pin) < 0 {
            if errno == EEXIST { return state.withLock { $0.pins[hash] != nil } }
            if errno == ENOENT { return false }
            throw Sys.fail("link", pin)
        }
        state.withLock { $0.pins[hash] = pin }
        return true
    }

    /// Makes the file `temp` (holding the asset's bytes) the pin of `hash`, and links the asset to it.
    private func store(_ hash: String, from temp: String) throws(RecordStoreError) {
        let path = layout.assetPath(hash)
        let pin = pinPath(hash)
        try Sys.rename(temp, pin)
        state.withLock { $0.pins[hash] = pin }
        try Sys.mkdir(AtomicFile.directory(of: path))
        if link(pin, path) == 0 {
            state.withLock { $0.unsyncedAssets.append(path) }
        } else if errno != EEXIST {
            throw Sys.fail("link", path)
        }
    }

    /// With the commit lock held, before a commit that saves `records`: every asset they use is on
    /// disk (relinked from this process's pin if another process collected it meanwhile).
    func ensureAssetsStored(_ records: [Record], state: inout DatabaseState) throws(RecordStoreError) {
        for record in records {
            for asset in record.assets {
                let path = layout.assetPath(asset.sha256)
                if try Sys.fileStatus(path) != nil { continue }
                guard let pin = state.pins[asset.sha256] else {
                    throw .invalidArguments("record \(record.recordID): asset \(asset.sha256) was not stored")
                }
                try Sys.mkdir(AtomicFile.directory(of: path))
                if link(pin, path) < 0, errno != EEXIST { throw Sys.fail("link", path) }
                state.unsyncedAssets.append(path)
            }
        }
    }

    /// After a commit (lock held): drops the pins of assets now saved and marks the assets no record uses any more.
    func noteAssetChanges(_ entry: JournalEntry, before: [Asset], state: inout DatabaseState) {
        for asset in entry.saves.flatMap(\.assets) {
            if let pin = state.pins.removeValue(forKey: asset.sha256) { try? Sys.unlink(pin) }
        }
        for asset in before where state.index.assetReferences[asset.sha256] == nil {
            state.collectable.insert(asset.sha256)
        }
    }

    /// With the commit lock held, caught up and the journal durable: unlinks the collectable assets still unused.
    func collectAssets(_ state: inout DatabaseState) {
        for hash in state.collectable where state.index.assetReferences[hash] == nil && state.pins[hash] == nil {
            try? Sys.unlink(layout.assetPath(hash))
        }
        state.collectable = []
    }

    /// Asset files no record uses, older than `age` (by change time) and not pinned by this process.
    func orphanedAssets(_ state: borrowing DatabaseState, olderThan age: TimeInterval) -> [String] {
        let now = Date().timeIntervalSince1970
        var orphans: [String] = []
        let fm = FileManager.default
        for shard in ((try? fm.contentsOfDirectory(atPath: layout.assets)) ?? []).sorted() {
            let dir = layout.assets + "/" + shard
            for name in ((try? fm.contentsOfDirectory(atPath: dir)) ?? []).sorted()
            where state.index.assetReferences[name] == nil && state.pins[name] == nil {
                let path = dir + "/" + name
                guard let st = try? Sys.fileStatus(path), st.st_mode & S_IFMT == S_IFREG else { continue }
                let changed = TimeInterval(max(st.st_mtim.tv_sec, st.st_ctim.tv_sec))
                if now - changed >= age { orphans.append(path) }
            }
        }
        return orphans
    }

    /// Deletes asset files no record uses that are older than `age` (the open and every checkpoint
    /// do this with ``assetGracePeriod``). Returns the paths deleted.
    @discardableResult
    public func collectOrphanedAssets(olderThan age: TimeInterval = RecordDatabase.assetGracePeriod) throws(RecordStoreError) -> [String] {
        guard !isReadOnly else { throw .readOnly(path: path) }
        let (removed, changes) = try state.withLock { (state) throws(RecordStoreError) -> ([String], [RecordStoreChange]) in
            try lockCommits(&state)
            defer { unlockCommits(state) }
            let changes = try catchUp(&state)
            return (sweepOrphans(&state, olderThan: age), changes)
        }
        notify(changes)
        return removed
    }

    /// The sweep itself, with the commit lock held and caught up.
    func sweepOrphans(_ state: inout DatabaseState, olderThan age: TimeInterval) -> [String] {
        let orphans = orphanedAssets(state, olderThan: age)
        for path in orphans { try? Sys.unlink(path) }
        return orphans
    }

    /// The bytes of an asset, when at most ``maximumAssetDataSize``.
    ///
    /// - Throws: ``RecordStoreError/damagedRecord(_:path:reason:)`` when the file is missing or larger
    ///   (it is not read: read large assets from ``assetPath(_:)`` in pieces).
    public func assetData(_ asset: Asset) throws(RecordStoreError) -> Data {
        let path = layout.assetPath(asset.sha256)
        guard let data = try Sys.readFile(path, limit: Self.maximumAssetDataSize) else {
            throw .damagedRecord(nil, path: path, reason: "asset file is missing")
        }
        return data
    }

    /// The largest asset ``assetData(_:)`` loads into memory.
    public static let maximumAssetDataSize = 2 << 30

    /// The database's directory for temp files (same filesystem as the assets; a dead process's
    /// files are removed at open). Callers may create their own temp files here, e.g. unlinked
    /// buffers for large open files; name them starting with the pid and a `-`.
    public var temporaryDirectoryPath: String { layout.temp }

    /// Where an asset's bytes are on disk (read-only: never write there).
    public func assetPath(_ asset: Asset) -> String { layout.assetPath(asset.sha256) }
}

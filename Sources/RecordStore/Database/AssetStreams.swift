import Foundation
import POSIX

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Reads an asset's bytes in pieces, for copying it elsewhere (a sync upload) without holding it
/// in memory. Not thread-safe: one reader is used from one thread.
public final class AssetReader {
    public let asset: Asset
    private let fd: Int32
    private let path: String

    /// Opens the asset's file.
    ///
    /// - Throws: ``RecordStoreError/damagedRecord(_:path:reason:)`` when the file is missing or
    ///   shorter than the asset; `.io` when it cannot be opened.
    public init(_ asset: Asset, in database: RecordDatabase) throws(RecordStoreError) {
        path = database.assetPath(asset)
        guard try Sys.fileStatus(path) != nil else { throw .damagedRecord(nil, path: path, reason: "asset file is missing") }
        fd = try Sys.open(path, O_RDONLY)
        self.asset = asset
        let size: Int
        do { size = try Sys.fileSize(fd, path: path).size } catch {
            Sys.close(fd)
            throw error
        }
        guard Int64(size) >= asset.size else {
            Sys.close(fd)
            throw .damagedRecord(nil, path: path, reason: "asset file holds \(size) of its \(asset.size) bytes")
        }
    }

    deinit { Sys.close(fd) }

    /// The `count` bytes at `offset` (fewer only at the asset's end).
    ///
    /// - Throws: `.io` for a failed read; ``RecordStoreError/damagedRecord(_:path:reason:)`` when
    ///   the file ends early.
    public func read(count: Int, at offset: Int64) throws(RecordStoreError) -> [UInt8] {
        let want = Int(max(0, min(Int64(count), asset.size - offset)))
        let bytes = try Sys.pread(fd, count: want, offset: Int(offset), path: path)
        guard bytes.count == want else { throw .damagedRecord(nil, path: path, reason: "asset file ended early") }
        return bytes
    }

    /// Reads the whole asset and checks its bytes against its SHA-256 (memory: one piece).
    ///
    /// - Throws: ``RecordStoreError/damagedRecord(_:path:reason:)`` when they differ.
    public func verify(pieceSize: Int = 1 << 20) throws(RecordStoreError) {
        var hasher = SHA256.Hasher()
        var offset: Int64 = 0
        while offset < asset.size {
            let piece = try read(count: pieceSize, at: offset)
            hasher.update(piece)
            offset += Int64(piece.count)
        }
        guard SHA256.hex(hasher.finalize()) == asset.sha256 else {
            throw .damagedRecord(nil, path: path, reason: "asset bytes do not match their SHA-256: run 'notesfs fsck'")
        }
    }
}

/// Receives an asset's bytes in pieces (a sync download) into a temp file of the database, then
/// stores them as an asset: memory does not grow with the asset's size. Not thread-safe.
public final class AssetWriter {
    private let database: RecordDatabase
    private let fd: Int32
    private let path: String
    private var finished = false

    /// A temp file in the database's temp directory (removed when the writer goes away).
    ///
    /// - Throws: `.io`, ``RecordStoreError/readOnly(path:)``.
    public init(in database: RecordDatabase) throws(RecordStoreError) {
        guard !database.isReadOnly else { throw .readOnly(path: database.path) }
        self.database = database
        path = "\(database.temporaryDirectoryPath)/\(getpid())-download-\(UUID.random().uuidString)"
        fd = try Sys.open(path, O_RDWR | O_CREAT | O_EXCL)
    }

    deinit {
        Sys.close(fd)
        try? Sys.unlink(path)
    }

    /// Writes `bytes` at `offset`.
    ///
    /// - Throws: `.io` (`ENOSPC` for a full disk).
    public func write(_ bytes: [UInt8], at offset: Int64) throws(RecordStoreError) {
        guard Syscall.retrying({ Glibc.lseek(fd, off_t(offset), SEEK_SET) }) >= 0 else { throw Sys.fail("lseek", path) }
        try Sys.writeAll(fd, bytes, path: path)
    }

    /// Stores the first `size` bytes written as an asset (pinned until a commit saves it, as
    /// ``RecordDatabase/makeAsset(_:)`` does) and returns it; the temp file is removed.
    ///
    /// - Throws: `.io`.
    public func finish(size: Int64) throws(RecordStoreError) -> Asset {
        guard !finished else { throw .invalidArguments("an asset writer finishes once") }
        finished = true
        return try database.makeAsset(readingFrom: fd, size: size)
    }
}

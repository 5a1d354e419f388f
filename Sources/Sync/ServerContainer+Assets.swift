import Foundation
import Postgres
import RecordStore

/// Assets on the server, by SHA-256, in chunks of ``ServerSchema/assetChunkSize`` (see
/// ``ServerSchema``): an upload or a download holds one chunk in memory, whatever the asset's size.
///
/// An upload is resumable and shared: each chunk commits on its own, an upload broken off (a lost
/// connection, a killed process) sends only the chunks the server lacks the next time, and two
/// clients uploading the same asset write the same bytes. The `notesfs_assets` row is written
/// after the server holds every chunk, so a record is never pushed before its asset is whole.
/// Chunks are only ever written by a client that has checked its bytes against the SHA-256 first.
extension ServerContainer {
    /// Uploads an asset's bytes unless the server holds them.
    ///
    /// - Throws: ``SyncError/store(_:)`` when the local asset file is missing, short or damaged
    ///   (nothing is uploaded then); ``SyncError/server(_:)``.
    func upload(_ asset: Asset, from database: RecordDatabase) throws(SyncError) {
        let chunk = ServerSchema.assetChunkSize
        let id = try serverID(of: asset)
        let present: Set<Int>
        do {
            guard try connection.execute("SELECT 1 FROM notesfs_assets WHERE sha256 = $1", [id]).rows.isEmpty else { return }
            let rows = try connection.execute("SELECT chunk FROM notesfs_asset_chunks WHERE sha256 = $1", [id]).rows
            present = Set(rows.compactMap { row in row.first.flatMap { $0 }.flatMap { Int($0) } })
        } catch { throw .server(error) }
        let reader: AssetReader
        do {
            reader = try AssetReader(asset, in: database)
            try reader.verify(pieceSize: chunk)
        } catch { throw .store(error) }
        let chunks = Self.chunkCount(asset.size)
        for index in 0..<chunks where !present.contains(index) {
            var bytes: [UInt8]
            do { bytes = try reader.read(count: chunk, at: Int64(index) * Int64(chunk)) } catch { throw .store(error) }
            if let cipher { bytes = try cipher.sealChunk(bytes, assetID: id, index: index, count: chunks) }
            do {
                try connection.execute(
                    "INSERT INTO notesfs_asset_chunks (sha256, chunk, data) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                    [id, String(index)], bytes: bytes)
            } catch { throw .server(error) }
        }
        let stored: ResultSet
        do {
            stored = try connection.execute(
                "SELECT count(*) AS chunks, coalesce(sum(octet_length(data)), 0) AS bytes FROM notesfs_asset_chunks WHERE sha256 = $1",
                [id])
        } catch { throw .server(error) }
        let size = storedSize(of: asset)
        guard stored.value(0, "chunks") == String(chunks), stored.value(0, "bytes") == String(size) else {
            throw .damagedServerRecord(asset.sha256, reason: "the server's chunks of this asset do not add up to its \(size) bytes")
        }
        do {
            try connection.execute("INSERT INTO notesfs_assets (sha256, size) VALUES ($1, $2) ON CONFLICT DO NOTHING", [id, String(size)])
        } catch { throw .server(error) }
    }

    /// The name an asset has on the server: its SHA-256, or on an encrypted server a keyed hash of
    /// it (so that the server cannot test whether it holds a file it knows).
    private func serverID(of asset: Asset) throws(SyncError) -> String {
        guard let cipher else { return asset.sha256 }
        return try cipher.assetID(asset.sha256)
    }

    /// How many bytes an asset's chunks hold on the server: its size, or the sum of its sealed chunks.
    private func storedSize(of asset: Asset) -> Int64 { cipher == nil ? asset.size : Self.sealedSize(asset.size) }

    /// The bytes of the sealed chunks of an asset of `size` bytes (`Int64.max` when that would not
    /// fit: a size no asset has, which then matches no row).
    static func sealedSize(_ size: Int64) -> Int64 {
        let chunk = Int64(ServerSchema.assetChunkSize)
        let count = Int64(chunkCount(size))
        guard count > 0 else { return 0 }
        let last = Int(size - (count - 1) * chunk)
        let (whole, overflow) = (count - 1).multipliedReportingOverflow(by: Int64(RowCipher.sealedChunkSize(Int(chunk))))
        let (total, overflowAgain) = whole.addingReportingOverflow(Int64(RowCipher.sealedChunkSize(last)))
        return overflow || overflowAgain ? .max : total
    }

    /// Downloads an asset into `database` (pinned there until a commit saves it) and checks its
    /// bytes against its SHA-256.
    ///
    /// - Throws: ``SyncError/damagedServerRecord(_:reason:)`` when the server lacks it or its
    ///   chunks are wrong; ``SyncError/store(_:)`` (a full disk); ``SyncError/server(_:)``.
    func download(_ asset: Asset, into database: RecordDatabase) throws(SyncError) {
        let chunk = ServerSchema.assetChunkSize
        let id = try serverID(of: asset)
        let chunks = Self.chunkCount(asset.size)
        let row: ResultSet
        do { row = try connection.execute("SELECT size FROM notesfs_assets WHERE sha256 = $1", [id]) } catch {
            throw .server(error)
        }
        guard row.value(0, "size") == String(storedSize(of: asset)) else {
            throw .damagedServerRecord(asset.sha256, reason: "asset missing on the server")
        }
        let writer: AssetWriter
        do { writer = try AssetWriter(in: database) } catch { throw .store(error) }
        for index in 0..<chunks {
            let offset = Int64(index) * Int64(chunk)
            let expected = Int(min(Int64(chunk), asset.size - offset))
            let stored = cipher == nil ? expected : RowCipher.sealedChunkSize(expected)
            let rows: [[UInt8]?]
            do {
                // The length check bounds what a damaged or hostile server can make this process allocate.
                rows = try connection.fetchBytes(
                    "SELECT data FROM notesfs_asset_chunks WHERE sha256 = $1 AND chunk = $2 AND octet_length(data) = $3",
                    [id, String(index), String(stored)])
            } catch { throw .server(error) }
            guard var bytes = rows.first ?? nil, bytes.count == stored else {
                throw .damagedServerRecord(
                    asset.sha256, reason: "chunk \(index) of the asset is missing or has the wrong size on the server")
            }
            if let cipher {
                guard let plain = cipher.openChunk(bytes, assetID: id, index: index, count: chunks, expected: expected) else {
                    throw .damagedServerRecord(asset.sha256, reason: "chunk \(index) of the asset " + RowCipher.notOpened)
                }
                bytes = plain
            }
            do { try writer.write(bytes, at: offset) } catch { throw .store(error) }
        }
        let made: Asset
        do { made = try writer.finish(size: asset.size) } catch { throw .store(error) }
        guard made == asset else { throw .damagedServerRecord(asset.sha256, reason: "asset bytes do not match their SHA-256") }
    }

    /// How many chunks an asset of `size` bytes takes (0 for a negative size). Divides before it
    /// adds, so that no size, up to `Int64.max`, overflows.
    static func chunkCount(_ size: Int64) -> Int {
        let chunk = Int64(ServerSchema.assetChunkSize)
        let whole = max(0, size) / chunk
        return Int(whole + (max(0, size) % chunk == 0 ? 0 : 1))
    }
}

import Foundation
import Postgres
import RecordStore

/// `sync encrypt` and `sync rotate-key`: every row and asset of the server sealed again, under a
/// new data key, in one transaction.
extension ServerContainer {
    /// What ``reseal(from:to:keys:)`` did: each record's seq before and after, by record name, and
    /// the highest seq before and after.
    struct Resealing {
        var seqs: [String: (old: Int64, new: Int64)] = [:]
        var lastOldSeq: Int64 = 0
        var lastSeq: Int64 = 0
    }

    /// Makes `keys` the server's wrapped keys and rewrites every row and asset sealed by `new`: a
    /// readable server's (`old` nil: `sync encrypt`), or one sealed by `old` (`sync rotate-key`).
    /// One transaction under the push lock: all of it or nothing (a `kill -9`, a lost connection
    /// or a failure rolls it back, and running it again starts over). A push by another machine
    /// waits for it, then finds keys it does not hold and writes nothing (``push(_:after:key:)``);
    /// its edits are pushed sealed once it joins.
    ///
    /// Rows are read a page at a time (200 rows, ``pageBytes``) and assets a chunk at a time, so
    /// memory stays bounded whatever the server holds. A readable payload is sealed as the server
    /// holds it, read or not by this notesfs; a sealed row or chunk that does not open with `old`
    /// is left as it is (no key opens it).
    ///
    /// - Throws: ``SyncError/keys(_:)`` when the server's keys are not `old`'s (another machine
    ///   encrypted it or rotated the key first), ``SyncError/server(_:)``.
    func reseal(from old: RowCipher?, to new: RowCipher, keys: [WrappedKey]) throws(SyncError) -> Resealing {
        var refusal: SyncError?
        func refuse(_ error: SyncError) -> PostgresError {
            refusal = error
            return PostgresError(.client, "\(error)")
        }
        do throws(PostgresError) {
            return try connection.transaction { () throws(PostgresError) -> Resealing in
                try connection.execute("SELECT pg_advisory_xact_lock(\(ServerSchema.pushLock))")
                guard try Self.keyIDs(connection) == Set([old?.key.keyID].compactMap { $0 }) else {
                    throw refuse(
                        .keys(
                            old == nil
                                ? "the server is encrypted already (another machine encrypted it): join it with"
                                    + " 'notesfs sync init URL' and its passphrase"
                                : "the server's key is not the one this database holds (another machine rotated it first):"
                                    + " join with 'notesfs sync init URL' and the passphrase; nothing was changed"))
                }
                try connection.execute("DELETE FROM notesfs_keys")
                for key in keys { try ServerKeys.write(key, on: connection) }
                var done = Resealing()
                let top = try connection.execute("SELECT coalesce(max(seq), 0) AS seq FROM notesfs_records").value(0, "seq")
                done.lastOldSeq = top.flatMap { Int64($0) } ?? 0
                var assets: [String: Int64] = [:]  // a sealed server's assets, by SHA-256: their sizes, from the payloads
                var after: Int64 = 0
                while true {
                    // Rows up to the last seq before this transaction: the ones it writes come after.
                    let page: [(rowName: String, seq: Int64, envelope: RowCipher.Envelope)]
                    if let old {
                        // A sealed server's rows, read and opened as a pull reads them; a row that does
                        // not open (nor with any key) is skipped, left as it is.
                        let sealed: ServerPage
                        do throws(SyncError) {
                            sealed = try ServerContainer(connection: connection, cipher: old).changes(
                                after: after, through: done.lastOldSeq, limit: 200)
                            page = try sealed.records.map { (record) throws(SyncError) in
                                for asset in record.payload?.fields.values.flatMap(\.assets) ?? [] { assets[asset.sha256] = asset.size }
                                let envelope = RowCipher.Envelope(
                                    recordName: record.recordName, recordType: record.recordType, origin: record.origin,
                                    payload: record.payload?.jsonText)
                                return (try old.rowID(record.recordName), record.seq, envelope)
                            }
                        } catch { throw refuse(error) }
                        guard let last = sealed.lastSeq else { break }
                        after = last
                    } else {
                        page = try readableRows(after: after, through: done.lastOldSeq)
                        guard let last = page.last?.seq else { break }
                        after = last
                    }
                    for (rowName, seq, envelope) in page {
                        guard
                            let next = try connection.execute("SELECT nextval('notesfs_seq') AS seq").value(0, "seq").flatMap({ Int64($0) })
                        else { throw PostgresError(.client, "the server handed out no seq") }
                        let rowID: String
                        let origin: String
                        let sealed: [UInt8]
                        do throws(SyncError) {
                            rowID = try new.rowID(envelope.recordName)
                            origin = try new.originID(envelope.origin)
                            sealed = try new.seal(envelope, rowID: rowID, seq: next)
                        } catch { throw refuse(error) }
                        try connection.execute(
                            """
                            UPDATE notesfs_records SET record_name = $1, record_type = '\(RowCipher.sealedType)', seq = $2::bigint,
                                deleted = false, payload = NULL, origin = $3, sealed = $5
                            WHERE record_name = $4
                            """, [rowID, String(next), origin, rowName], bytes: sealed)
                        done.seqs[envelope.recordName] = (seq, next)
                        done.lastSeq = next
                    }
                }
                if let old { try resealAssets(assets, from: old, to: new, refuse) } else { try encryptAssets(with: new, refuse) }
                // Push keys name rows of the old names; a crashed push of before is looked for in vain.
                try connection.execute("DELETE FROM notesfs_pushes")
                if done.lastSeq > 0 { try connection.notify(ServerSchema.channel, payload: String(done.lastSeq)) }
                return done
            }
        } catch {
            if let refusal { throw refusal }
            throw .server(error)
        }
    }

    /// One page of a readable server's rows to seal, in seq order, up to the seq `through`, each
    /// with its envelope: the row's values as the server holds them, its payload unread.
    private func readableRows(after: Int64, through: Int64) throws(PostgresError) -> [(
        rowName: String, seq: Int64, envelope: RowCipher.Envelope
    )] {
        let page = try connection.execute(
            """
            SELECT record_name, record_type, seq, deleted, origin, payload FROM
                (SELECT record_name, record_type, seq, deleted, origin, payload::text AS payload,
                    \(Self.rowSize) AS size, sum(\(Self.rowSize)) OVER (ORDER BY seq) AS running
                 FROM notesfs_records WHERE seq > $1 AND seq <= $2 AND sealed IS NULL ORDER BY seq LIMIT 200) AS page
            WHERE running - size < \(Self.pageBytes) ORDER BY seq
            """, [String(after), String(through)])
        return page.rows.indices.compactMap { row in
            guard let name = page.value(row, "record_name"), let seq = page.value(row, "seq").flatMap({ Int64($0) }) else { return nil }
            let envelope = RowCipher.Envelope(
                recordName: name, recordType: page.value(row, "record_type") ?? "", origin: page.value(row, "origin") ?? "",
                payload: page.value(row, "deleted") == "t" ? nil : page.value(row, "payload") ?? "")
            return (name, seq, envelope)
        }
    }

    /// Every asset of a readable server sealed under its keyed hash, a chunk at a time. What is
    /// left readable is deleted: partial uploads (chunks of no asset row: their uploader sends
    /// them again), and asset rows whose chunks are missing or whose size no asset has (damaged or
    /// made up by the server: they hold no bytes, and a SHA-256 left readable would name a file).
    private func encryptAssets(with cipher: RowCipher, _ refuse: (SyncError) -> PostgresError) throws(PostgresError) {
        let assets = try connection.execute("SELECT sha256, size FROM notesfs_assets")
        var sealed: [String] = []
        for row in assets.rows.indices {
            // A size the server made up (negative, over what an asset may hold) names no asset: left as it is.
            guard let sha = assets.value(row, "sha256"), let size = assets.value(row, "size").flatMap({ Int64($0) }), size >= 0,
                size <= ServerValueRules.assetSizeLimit
            else { continue }
            if let id = try moveChunks(of: sha, size: size, from: (sha, nil), to: cipher, refuse) { sealed.append(id) }
        }
        let kept = String(decoding: (try? JSONSerialization.data(withJSONObject: sealed)) ?? Data("[]".utf8), as: UTF8.self)
        try connection.execute("DELETE FROM notesfs_assets WHERE sha256 NOT IN (SELECT jsonb_array_elements_text($1::jsonb))", [kept])
        try connection.execute("DELETE FROM notesfs_asset_chunks WHERE sha256 NOT IN (SELECT sha256 FROM notesfs_assets)")
    }

    /// The assets the server's rows name (`assets`: size by SHA-256) sealed again under `new`; an
    /// asset the server lacks or whose chunks do not open with `old` is left as it is.
    private func resealAssets(_ assets: [String: Int64], from old: RowCipher, to new: RowCipher, _ refuse: (SyncError) -> PostgresError)
        throws(PostgresError)
    {
        for (sha, size) in assets.sorted(by: { $0.key < $1.key }) where size >= 0 && size <= ServerValueRules.assetSizeLimit {
            let oldID: String
            do throws(SyncError) { oldID = try old.assetID(sha) } catch { throw refuse(error) }
            let stored = try connection.execute("SELECT size FROM notesfs_assets WHERE sha256 = $1", [oldID]).value(0, "size")
            guard stored == String(Self.sealedSize(size)) else { continue }
            _ = try moveChunks(of: sha, size: size, from: (oldID, old), to: new, refuse)
        }
        try connection.execute("DELETE FROM notesfs_asset_chunks WHERE sha256 NOT IN (SELECT sha256 FROM notesfs_assets)")
    }

    /// Moves the chunks of the asset `sha` (`size` bytes) from the rows named `from.id` (sealed by
    /// `from.cipher`, or readable) to rows sealed by `to` under its keyed hash, and its asset row
    /// too; returns the new name, or nil (nothing moved) when a chunk is missing or does not open.
    private func moveChunks(
        of sha: String, size: Int64, from: (id: String, cipher: RowCipher?), to: RowCipher, _ refuse: (SyncError) -> PostgresError
    ) throws(PostgresError) -> String? {
        let chunkSize = Int64(ServerSchema.assetChunkSize)
        let newID: String
        do throws(SyncError) { newID = try to.assetID(sha) } catch { throw refuse(error) }
        let count = Self.chunkCount(size)
        for index in 0..<count {
            let expected = Int(min(chunkSize, size - Int64(index) * chunkSize))
            let stored = from.cipher == nil ? expected : RowCipher.sealedChunkSize(expected)
            let rows = try connection.fetchBytes(
                "SELECT data FROM notesfs_asset_chunks WHERE sha256 = $1 AND chunk = $2 AND octet_length(data) = $3",
                [from.id, String(index), String(stored)])
            var plain = rows.first ?? nil
            if let cipher = from.cipher, let sealed = plain {
                plain = cipher.openChunk(sealed, assetID: from.id, index: index, count: count, expected: expected)
            }
            guard let bytes = plain else { return nil }
            let sealed: [UInt8]
            do throws(SyncError) { sealed = try to.sealChunk(bytes, assetID: newID, index: index, count: count) } catch {
                throw refuse(error)
            }
            try connection.execute(
                "INSERT INTO notesfs_asset_chunks (sha256, chunk, data) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                [newID, String(index)],
                bytes: sealed)
        }
        try connection.execute(
            "INSERT INTO notesfs_assets (sha256, size) VALUES ($1, $2) ON CONFLICT DO NOTHING", [newID, String(Self.sealedSize(size))])
        try connection.execute("DELETE FROM notesfs_assets WHERE sha256 = $1", [from.id])
        try connection.execute("DELETE FROM notesfs_asset_chunks WHERE sha256 = $1", [from.id])
        return newID
    }
}

import Foundation
import Postgres

/// `sync encrypt`: a readable server made an encrypted one, in one transaction.
extension ServerContainer {
    /// What ``encrypt(with:keys:)`` did: each record's seq before and after, by record name, and
    /// the highest seq before and after.
    struct Encryption {
        var seqs: [String: (old: Int64, new: Int64)] = [:]
        var lastOldSeq: Int64 = 0
        var lastSeq: Int64 = 0
    }

    /// Stores `keys` on this readable server and rewrites every row and asset sealed by `cipher`,
    /// in one transaction under the push lock: all of it or nothing (a `kill -9`, a lost
    /// connection or a failure rolls it back, and running it again starts over). A push by
    /// another machine waits for it, then finds keys it does not hold and writes nothing
    /// (``push(_:after:key:)``); its edits are pushed sealed once it joins.
    ///
    /// Rows are read a page at a time (200 rows, ``pageBytes`` of payloads) and assets a chunk
    /// at a time, so memory stays bounded whatever the server holds. A payload is sealed as the
    /// server holds it, read or not by this notesfs: what a reader would set aside, it still sets aside.
    ///
    /// - Throws: ``SyncError/keys(_:)`` when the server holds keys already (another machine
    ///   encrypted it), ``SyncError/damagedServerRecord(_:reason:)`` for an asset whose chunks
    ///   are missing, ``SyncError/server(_:)``.
    func encrypt(with cipher: RowCipher, keys: [WrappedKey]) throws(SyncError) -> Encryption {
        var refusal: SyncError?
        func refuse(_ error: SyncError) -> PostgresError {
            refusal = error
            return PostgresError(.client, "\(error)")
        }
        do throws(PostgresError) {
            return try connection.transaction { () throws(PostgresError) -> Encryption in
                try connection.execute("SELECT pg_advisory_xact_lock(\(ServerSchema.pushLock))")
                guard try Self.keyIDs(connection).isEmpty else {
                    throw refuse(
                        .keys(
                            "the server is encrypted already (another machine encrypted it): join it with"
                                + " 'notesfs sync init URL' and its passphrase"))
                }
                for key in keys { try ServerKeys.write(key, on: connection) }
                var done = Encryption()
                let top = try connection.execute("SELECT coalesce(max(seq), 0) AS seq FROM notesfs_records").value(0, "seq")
                done.lastOldSeq = top.flatMap { Int64($0) } ?? 0
                var after: Int64 = 0
                while true {
                    // Rows up to the last seq before this transaction: the sealed ones it writes come after.
                    let page = try connection.execute(
                        """
                        SELECT record_name, record_type, seq, deleted, origin, payload FROM
                            (SELECT record_name, record_type, seq, deleted, origin, payload::text AS payload,
                                sum(coalesce(octet_length(payload::text), 0)) OVER (ORDER BY seq) AS running
                             FROM notesfs_records WHERE seq > $1 AND seq <= $2 AND sealed IS NULL ORDER BY seq LIMIT 200) AS page
                        WHERE running - coalesce(octet_length(payload), 0) < \(Self.pageBytes) ORDER BY seq
                        """, [String(after), String(done.lastOldSeq)])
                    guard !page.rows.isEmpty else { break }
                    for row in page.rows.indices {
                        guard let name = page.value(row, "record_name"), let seq = page.value(row, "seq").flatMap({ Int64($0) }) else {
                            continue
                        }
                        after = max(after, seq)
                        let envelope = RowCipher.Envelope(
                            recordName: name, recordType: page.value(row, "record_type") ?? "", origin: page.value(row, "origin") ?? "",
                            payload: page.value(row, "deleted") == "t" ? nil : page.value(row, "payload") ?? "")
                        guard
                            let new = try connection.execute("SELECT nextval('notesfs_seq') AS seq").value(0, "seq").flatMap({ Int64($0) })
                        else { throw PostgresError(.client, "the server handed out no seq") }
                        let rowID: String
                        let origin: String
                        let sealed: [UInt8]
                        do throws(SyncError) {
                            rowID = try cipher.rowID(name)
                            origin = try cipher.originID(envelope.origin)
                            sealed = try cipher.seal(envelope, rowID: rowID, seq: new)
                        } catch { throw refuse(error) }
                        try connection.execute(
                            """
                            UPDATE notesfs_records SET record_name = $1, record_type = '\(RowCipher.sealedType)', seq = $2::bigint,
                                deleted = false, payload = NULL, origin = $3, sealed = $5
                            WHERE record_name = $4
                            """, [rowID, String(new), origin, name], bytes: sealed)
                        done.seqs[name] = (seq, new)
                        done.lastSeq = new
                    }
                }
                try encryptAssets(with: cipher, refuse)
                // Push keys name records; a crashed push of the readable server is looked for by name, in vain.
                try connection.execute("DELETE FROM notesfs_pushes")
                if done.lastSeq > 0 { try connection.notify(ServerSchema.channel, payload: String(done.lastSeq)) }
                return done
            }
        } catch {
            if let refusal { throw refusal }
            throw .server(error)
        }
    }

    /// Every asset sealed under its keyed hash, a chunk at a time; the readable chunks and partial
    /// uploads (chunks of no asset row: their uploader sends them again) deleted.
    private func encryptAssets(with cipher: RowCipher, _ refuse: (SyncError) -> PostgresError) throws(PostgresError) {
        let chunkSize = Int64(ServerSchema.assetChunkSize)
        let assets = try connection.execute("SELECT sha256, size FROM notesfs_assets")
        for row in assets.rows.indices {
            guard let sha = assets.value(row, "sha256"), let size = assets.value(row, "size").flatMap({ Int64($0) }), size >= 0 else {
                continue
            }
            let id: String
            do throws(SyncError) { id = try cipher.assetID(sha) } catch { throw refuse(error) }
            let count = Self.chunkCount(size)
            for index in 0..<count {
                let expected = Int(min(chunkSize, size - Int64(index) * chunkSize))
                let rows = try connection.fetchBytes(
                    "SELECT data FROM notesfs_asset_chunks WHERE sha256 = $1 AND chunk = $2 AND octet_length(data) = $3",
                    [sha, String(index), String(expected)])
                guard let bytes = rows.first ?? nil else {
                    throw refuse(
                        .damagedServerRecord(sha, reason: "chunk \(index) of this asset is missing on the server: nothing was encrypted"))
                }
                let sealed: [UInt8]
                do throws(SyncError) { sealed = try cipher.sealChunk(bytes, assetID: id, index: index, count: count) } catch {
                    throw refuse(error)
                }
                try connection.execute(
                    "INSERT INTO notesfs_asset_chunks (sha256, chunk, data) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                    [id, String(index)],
                    bytes: sealed)
                try connection.execute("DELETE FROM notesfs_asset_chunks WHERE sha256 = $1 AND chunk = $2", [sha, String(index)])
            }
            try connection.execute(
                "INSERT INTO notesfs_assets (sha256, size) VALUES ($1, $2) ON CONFLICT DO NOTHING", [id, String(Self.sealedSize(size))])
            try connection.execute("DELETE FROM notesfs_assets WHERE sha256 = $1", [sha])
        }
        try connection.execute("DELETE FROM notesfs_asset_chunks WHERE sha256 NOT IN (SELECT sha256 FROM notesfs_assets)")
    }
}

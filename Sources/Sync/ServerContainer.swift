import Foundation
import Postgres
import RecordStore

/// One record as the server holds it: its last version, or a tombstone.
struct ServerRecord: Sendable {
    var recordName: String
    var recordType: String
    /// The server change sequence of this version: also its change tag.
    var seq: Int64
    /// nil for a tombstone (the record was deleted).
    var payload: RecordPayload?
    /// Which client wrote it, from which local version (``SyncEngine/origin(of:)``).
    var origin: String
}

/// A server row this notesfs cannot read or apply: set aside (``SyncState/setAside``) while the
/// rest of its page applies.
struct UnreadableServerRecord: Sendable {
    var recordName: String
    var recordType: String
    var seq: Int64
    var reason: String
}

/// One answer of the server: the rows read, those set aside, and the last seq among them all.
struct ServerPage: Sendable {
    var records: [ServerRecord] = []
    var unreadable: [UnreadableServerRecord] = []
    /// The highest seq of the page, nil when it is empty.
    var lastSeq: Int64?
    /// The payload bytes (JSON text) of the rows read.
    var payloadBytes: Int64 = 0
}

/// A local change to send: a version of a record, or its deletion.
struct PushChange: Sendable {
    var recordName: String
    var recordType: String
    /// nil to delete the record.
    var payload: RecordPayload?
    /// The server seq this change was made against (nil for a record new to the server): the
    /// push applies only if the server still holds that version, as `ifServerRecordUnchanged`.
    var expectedSeq: Int64?
    /// Identifies this very change: a re-push of it (after a crash before the local state was
    /// saved) finds the server row already carrying it and succeeds without writing again.
    var origin: String
}

/// What the server did with one ``PushChange``.
enum PushOutcome: Sendable, Equatable {
    /// Written (or found already written by this same change) as version `seq`.
    case saved(seq: Int64)
    /// The server holds a version this change was not made against: fetch and merge first.
    case conflict
}

/// The server container: reads and writes of the tables ``ServerSchema`` describes.
struct ServerContainer {
    let connection: Connection
    /// Seals and opens rows on an encrypted server (``ServerSchema``); nil for a readable one.
    var cipher: RowCipher? = nil

    /// Server records changed after `seq` (and up to `last`), in seq order: at most `limit`, and no more than
    /// ``pageBytes`` of payloads (always at least one row), so that a page, and the local commit
    /// that applies it, stays bounded whatever the rows hold.
    ///
    /// - Throws: ``SyncError/server(_:)``.
    func changes(after seq: Int64, through last: Int64 = .max, limit: Int) throws(SyncError) -> ServerPage {
        try records(
            from: """
                (SELECT *, sum(least(\(Self.rowSize), \(Self.payloadLimit))) OVER (ORDER BY seq) AS running
                 FROM notesfs_records WHERE seq > $1 AND seq <= $3 ORDER BY seq LIMIT $2) AS page
                WHERE running - least(\(Self.rowSize), \(Self.payloadLimit)) < \(Self.pageBytes) ORDER BY seq
                """, [String(seq), String(limit), String(last)])
    }

    /// How many rows changed after `seq` (what a pull from there fetches).
    ///
    /// - Throws: ``SyncError/server(_:)``.
    func count(after seq: Int64) throws(SyncError) -> Int {
        do {
            return try connection.execute("SELECT count(*) AS n FROM notesfs_records WHERE seq > $1", [String(seq)]).value(0, "n")
                .flatMap { Int($0) } ?? 0
        } catch { throw .server(error) }
    }

    /// The server's current versions of the records named `names` (those it holds), in seq order.
    ///
    /// - Throws: ``SyncError/server(_:)``.
    func records(named names: [String]) throws(SyncError) -> ServerPage {
        var rowNames = names
        if let cipher { rowNames = try names.map { (name) throws(SyncError) in try cipher.rowID(name) } }
        let list = String(decoding: (try? JSONSerialization.data(withJSONObject: rowNames)) ?? Data("[]".utf8), as: UTF8.self)
        return try records(
            from: "notesfs_records WHERE record_name IN (SELECT jsonb_array_elements_text($1::jsonb)) ORDER BY seq", [list])
    }

    /// The largest payload (its JSON text) a row may carry; a larger one is set aside unread. Twice
    /// this, the payload escaped as the merge base in ``AppliedPageMarker``, stays under what a
    /// local record may hold.
    static let payloadLimit = 24 << 20
    /// The payload bytes one page of changes brings at most (but for its first row).
    static let pageBytes = 8 << 20
    /// The longest record name, record type and origin read from a row; a longer one is set aside.
    static let nameLimit = 4096
    /// What a row weighs in a page: its payload's JSON text, or its sealed bytes.
    static let rowSize = "coalesce(octet_length(payload::text), octet_length(sealed), 0)"

    /// The rows `source` (an SQL `FROM` source with its `WHERE` and `ORDER BY`) selects. A row
    /// this notesfs cannot read (an oversized or undecodable payload, a value the store would
    /// refuse, a name or type out of bounds) is returned as ``ServerPage/unreadable`` with the
    /// reason, and the rest as records: one row never stops the others.
    private func records(from source: String, _ parameters: [String?]) throws(SyncError) -> ServerPage {
        let result: ResultSet
        let limit = Self.nameLimit
        do {
            result = try connection.execute(
                """
                SELECT left(record_name, \(limit + 1)) AS record_name, left(record_type, \(limit + 1)) AS record_type, seq, deleted,
                    left(origin, \(limit + 1)) AS origin, octet_length(payload::text) AS size,
                    CASE WHEN octet_length(payload::text) <= \(Self.payloadLimit) THEN payload::text END AS payload,
                    octet_length(sealed) AS sealed_size,
                    CASE WHEN octet_length(sealed) <= \(Self.payloadLimit) THEN encode(sealed, 'base64') END AS sealed
                FROM
                """ + " " + source, parameters)
        } catch { throw .server(error) }
        var page = ServerPage()
        for row in result.rows.indices {
            guard let seq = result.value(row, "seq").flatMap({ Int64($0) }) else { continue }  // seq is NOT NULL bigint
            page.lastSeq = max(page.lastSeq ?? seq, seq)
            let name = result.value(row, "record_name") ?? ""
            let type = result.value(row, "record_type") ?? ""
            func setAside(_ reason: String) {
                let shownName = name.utf8.count > limit ? "(a name of over \(limit) bytes)" : name
                page.unreadable.append(UnreadableServerRecord(recordName: shownName, recordType: type, seq: seq, reason: reason))
            }
            guard !name.isEmpty, name.utf8.count <= limit else {
                setAside(name.isEmpty ? "empty record name" : "record name over \(limit) bytes")
                continue
            }
            guard !type.isEmpty, type.utf8.count <= limit else {
                setAside(type.isEmpty ? "empty record type" : "record type over \(limit) bytes")
                continue
            }
            if let cipher {
                switch Self.openSealed(result, row, cipher: cipher, seq: seq) {
                case .success(let record):
                    page.payloadBytes += Int64(result.value(row, "sealed_size").flatMap { Int64($0) } ?? 0)
                    page.records.append(record)
                case .failure(let unreadable):
                    page.unreadable.append(
                        UnreadableServerRecord(
                            recordName: unreadable.recordName ?? name, recordType: unreadable.recordType ?? type, seq: seq,
                            reason: unreadable.reason))
                }
                continue
            }
            var payload: RecordPayload?
            if result.value(row, "deleted") != "t" {
                guard let text = result.value(row, "payload") else {
                    let size = result.value(row, "size").flatMap { Int64($0) }
                    setAside(size.map { "payload of \($0) bytes, over the \(Self.payloadLimit) this notesfs reads" } ?? "no payload")
                    continue
                }
                page.payloadBytes += Int64(text.utf8.count)
                do { payload = try RecordPayload(jsonText: text, recordName: name) } catch {
                    guard case .damagedServerRecord(_, let reason) = error else { throw error }
                    setAside(reason)
                    continue
                }
            }
            page.records.append(
                ServerRecord(recordName: name, recordType: type, seq: seq, payload: payload, origin: result.value(row, "origin") ?? ""))
        }
        return page
    }

    /// The record a sealed row holds, or why it is set aside (a row of an encrypted server that is
    /// not sealed, too large, or does not open).
    private static func openSealed(_ result: ResultSet, _ row: Int, cipher: RowCipher, seq: Int64) -> Result<
        ServerRecord, RowCipher.UnreadableReason
    > {
        guard let text = result.value(row, "sealed") else {
            let size = result.value(row, "sealed_size").flatMap { Int64($0) }
            return .failure(
                RowCipher.UnreadableReason(
                    size.map { "sealed row of \($0) bytes, over the \(Self.payloadLimit) this notesfs reads" }
                        ?? "a row that is not sealed, on an encrypted server (forged, or written by a client without the key)"))
        }
        guard let sealed = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
            return .failure(RowCipher.UnreadableReason("a sealed row that is not bytes"))
        }
        return cipher.open(rowID: result.value(row, "record_name") ?? "", seq: seq, sealed: [UInt8](sealed))
    }

    /// Applies `changes` in one transaction, each only if the server still holds the version it
    /// was made against, and notifies listeners of the new last seq. Nothing is written when it throws.
    ///
    /// - Throws: ``SyncError/server(_:)``.
    ///
    /// Also returns the server seq through which this client now knows every change, when no
    /// other client's change came after `knownSeq` (the seq its fetches reached): then the new
    /// seqs are this transaction's own, and the next fetch need not bring them back. nil otherwise.
    /// (Pushes hold ``ServerSchema/pushLock`` from before their first `nextval` to their commit,
    /// so a `max(seq)` read under it sees every seq handed out before.)
    ///
    /// The seqs it saved are written under `key` in `notesfs_pushes` in the same transaction (and
    /// the rows of the client's other keys deleted), for ``committedPush(_:)`` to find.
    func push(_ changes: [PushChange], after knownSeq: Int64, key: PushKey) throws(SyncError) -> (
        outcomes: [PushOutcome], knownThrough: Int64?
    ) {
        let rowNames: [String]
        if let cipher {
            rowNames = try changes.map { (change) throws(SyncError) in try cipher.rowID(change.recordName) }
        } else {
            rowNames = changes.map(\.recordName)
        }
        var refusal: SyncError?
        do {
            return try connection.transaction { () throws(PostgresError) -> ([PushOutcome], Int64?) in
                try connection.execute("SELECT pg_advisory_xact_lock(\(ServerSchema.pushLock))")
                let before = try connection.execute("SELECT coalesce(max(seq), 0) AS seq FROM notesfs_records").value(0, "seq")
                let caughtUp = before.flatMap { Int64($0) }.map { $0 <= knownSeq } ?? false
                // Checked under the lock that `sync encrypt` takes too: a push never writes rows of
                // another encryption than the server's (readable rows after it was encrypted).
                guard try Self.keyIDs(connection) == Set([cipher?.key.keyID].compactMap { $0 }) else {
                    refusal = .keys(
                        "the server's encryption changed during this sync (another machine encrypted it or changed its key):"
                            + " nothing was pushed; run 'notesfs sync init URL' with the passphrase")
                    throw PostgresError(.client, "the server's keys changed")
                }
                var outcomes: [PushOutcome] = []
                if let cipher {
                    // Sealed rows bind their seq, so it is taken first (under the push lock, as nextval is otherwise).
                    let seqs = try connection.execute(
                        "SELECT nextval('notesfs_seq') AS seq FROM generate_series(1, $1::integer)", [String(changes.count)])
                    for (index, change) in changes.enumerated() {
                        guard let seq = seqs.value(index, "seq").flatMap({ Int64($0) }) else {
                            throw PostgresError(.client, "the server handed out no seq")
                        }
                        outcomes.append(
                            try push(change, rowID: rowNames[index], seq: seq, cipher: cipher, refusal: &refusal))
                    }
                } else {
                    for change in changes { outcomes.append(try push(change)) }
                }
                var seqs: [String: String] = [:]
                for (rowName, outcome) in zip(rowNames, outcomes) {
                    if case .saved(let seq) = outcome { seqs[rowName] = String(seq) }
                }
                try connection.execute(
                    "DELETE FROM notesfs_pushes WHERE client_id = $1 AND push_key <> $2", [key.clientID, key.value])
                try connection.execute(
                    """
                    INSERT INTO notesfs_pushes (client_id, push_key, record_name, seq)
                    SELECT $1, $2, key, value::bigint FROM jsonb_each_text($3::jsonb)
                    """,
                    [key.clientID, key.value, Self.jsonText(seqs)])
                let last = outcomes.compactMap({ if case .saved(let seq) = $0 { seq } else { nil } }).max()
                if let last { try connection.notify(ServerSchema.channel, payload: String(last)) }
                return (outcomes, caughtUp ? max(knownSeq, last ?? knownSeq) : nil)
            }
        } catch {
            if let refusal { throw refusal }
            throw .server(error)
        }
    }

    /// The seqs the push transaction of `key` saved, by record name: empty when it did not
    /// commit (or saved nothing). Waits for the push lock first, so that a transaction of this
    /// key still under way (its client killed while the server commits it) is over when it reads.
    ///
    /// - Throws: ``SyncError/server(_:)``.
    func committedPush(_ key: PushKey, of names: [String]) throws(SyncError) -> [String: Int64] {
        var rowNames: [String: String] = [:]  // on an encrypted server: row name → record name
        if let cipher { for name in names { rowNames[try cipher.rowID(name)] = name } }
        do {
            return try connection.transaction { () throws(PostgresError) -> [String: Int64] in
                try connection.execute("SELECT pg_advisory_xact_lock(\(ServerSchema.pushLock))")
                let result = try connection.execute(
                    "SELECT record_name, seq FROM notesfs_pushes WHERE client_id = $1 AND push_key = $2", [key.clientID, key.value])
                var seqs: [String: Int64] = [:]
                for row in result.rows.indices {
                    if let name = result.value(row, "record_name"), let seq = result.value(row, "seq").flatMap({ Int64($0) }) {
                        seqs[cipher == nil ? name : rowNames[name] ?? name] = seq
                    }
                }
                return seqs
            }
        } catch { throw .server(error) }
    }

    /// Deletes the rows of the push `key` (its client's state records that push now).
    ///
    /// - Throws: ``SyncError/server(_:)``.
    func forgetPush(_ key: PushKey) throws(SyncError) {
        do {
            try connection.execute("DELETE FROM notesfs_pushes WHERE client_id = $1 AND push_key = $2", [key.clientID, key.value])
        } catch { throw .server(error) }
    }

    /// The server's identity: its epoch (nil when it has none, a schema from before epochs), the
    /// last seq it handed out, the sync generation it holds for `clientID` (0 for none), and the
    /// ids of the data keys it holds wrapped (none for a readable server).
    ///
    /// - Throws: ``SyncError/server(_:)``.
    func identity(clientID: String) throws(SyncError) -> (epoch: String?, lastSeq: Int64, generation: Int64, keyIDs: Set<String>) {
        do {
            let result = try connection.execute(
                """
                SELECT (SELECT min(epoch) FROM notesfs_server) AS epoch,
                    (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM notesfs_seq) AS seq,
                    (SELECT generation FROM notesfs_clients WHERE client_id = $1) AS generation,
                    (SELECT string_agg(DISTINCT left(key_id, 64), ' ') FROM notesfs_keys) AS key_ids
                """, [clientID])
            return (
                result.value(0, "epoch"), result.value(0, "seq").flatMap { Int64($0) } ?? 0,
                result.value(0, "generation").flatMap { Int64($0) } ?? 0,
                Set((result.value(0, "key_ids") ?? "").split(separator: " ").map(String.init))
            )
        } catch { throw .server(error) }
    }

    /// Raises the sync generation the server holds for `clientID` to `generation` and returns the
    /// one it held before (0 for a client it has not seen).
    ///
    /// - Throws: ``SyncError/server(_:)``.
    func startSync(clientID: String, generation: Int64) throws(SyncError) -> Int64 {
        do {
            // The CTE reads the row as it was before this statement changed it.
            let result = try connection.execute(
                """
                WITH old AS (SELECT generation FROM notesfs_clients WHERE client_id = $1)
                INSERT INTO notesfs_clients VALUES ($1, $2::bigint) ON CONFLICT (client_id)
                DO UPDATE SET generation = greatest(notesfs_clients.generation, EXCLUDED.generation)
                RETURNING (SELECT generation FROM old) AS before
                """, [clientID, String(generation)])
            return result.value(0, "before").flatMap { Int64($0) } ?? 0
        } catch { throw .server(error) }
    }

    /// The ids of the data keys the server holds wrapped (none: a readable server).
    static func keyIDs(_ connection: Connection) throws(PostgresError) -> Set<String> {
        Set(try connection.execute("SELECT DISTINCT left(key_id, 64) AS id FROM notesfs_keys LIMIT 8").rows.compactMap { $0.first ?? nil })
    }

    /// A string dictionary as a JSON object.
    static func jsonText(_ dictionary: [String: String]) -> String {
        String(
            decoding: (try? JSONSerialization.data(withJSONObject: dictionary, options: [.sortedKeys])) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// One change written as a sealed row at `seq` (see ``push(_:)``; the conditions are the same).
    /// A failure to seal is kept in `refusal` and ends the transaction.
    private func push(_ change: PushChange, rowID: String, seq: Int64, cipher: RowCipher, refusal: inout SyncError?)
        throws(PostgresError) -> PushOutcome
    {
        let sealed: [UInt8]
        let origin: String
        do {
            origin = try cipher.originID(change.origin)
            sealed = try cipher.seal(change, rowID: rowID, seq: seq)
        } catch {
            refusal = error
            throw PostgresError(.client, "sealing failed")
        }
        let written = try connection.execute(
            """
            INSERT INTO notesfs_records AS r (record_name, record_type, seq, deleted, payload, origin, sealed)
            VALUES ($1, '\(RowCipher.sealedType)', $2::bigint, false, NULL, $3, $5)
            ON CONFLICT (record_name) DO UPDATE SET record_type = EXCLUDED.record_type, seq = EXCLUDED.seq,
                deleted = false, payload = NULL, origin = EXCLUDED.origin, sealed = EXCLUDED.sealed
            WHERE r.seq = $4::bigint AND r.origin <> EXCLUDED.origin
            RETURNING seq
            """,
            [rowID, String(seq), origin, change.expectedSeq.map(String.init)], bytes: sealed)
        if let seq = written.rows.first?[0].flatMap({ Int64($0) }) { return .saved(seq: seq) }
        let current = try connection.execute("SELECT seq, origin FROM notesfs_records WHERE record_name = $1", [rowID])
        if current.value(0, "origin") == origin, let seq = current.value(0, "seq").flatMap({ Int64($0) }) {
            return .saved(seq: seq)
        }
        return .conflict
    }

    private func push(_ change: PushChange) throws(PostgresError) -> PushOutcome {
        let written = try connection.execute(
            """
            INSERT INTO notesfs_records AS r (record_name, record_type, seq, deleted, payload, origin)
            VALUES ($1, $2, nextval('notesfs_seq'), $3::boolean, $4::jsonb, $5)
            ON CONFLICT (record_name) DO UPDATE SET record_type = EXCLUDED.record_type, seq = EXCLUDED.seq,
                deleted = EXCLUDED.deleted, payload = EXCLUDED.payload, origin = EXCLUDED.origin
            WHERE r.seq = $6::bigint AND r.origin <> EXCLUDED.origin
            RETURNING seq
            """,
            [
                change.recordName, change.recordType, change.payload == nil ? "true" : "false", change.payload?.jsonText,
                change.origin, change.expectedSeq.map(String.init),
            ])
        if let seq = written.rows.first?[0].flatMap({ Int64($0) }) { return .saved(seq: seq) }
        let current = try connection.execute("SELECT seq, origin FROM notesfs_records WHERE record_name = $1", [change.recordName])
        if current.value(0, "origin") == change.origin, let seq = current.value(0, "seq").flatMap({ Int64($0) }) {
            return .saved(seq: seq)  // this very change, pushed before a crash: nothing to do again
        }
        return .conflict
    }
}

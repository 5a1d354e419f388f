import Foundation
import RecordStore

/// Seals what this client sends to an encrypted server, and opens what it fetches, under one
/// server's ``DataKey``.
///
/// - A record's row is named by ``DataKey/rowID(_:)`` of its record name, and its origin by the same
///   keyed hash of the origin (so that the server can still tell "the same change again" apart).
/// - Everything else (record name, type, origin, payload or its absence: a tombstone) is one
///   sealed envelope (``Envelope``), padded to a ``PaddedLength`` bucket, under ``DataKey/recordKey``
///   with the associated data `notesfs row v1 \0 rowID \0 seq`. A row that does not open is
///   forged, altered, moved from another record, replayed at another seq, or from another
///   server: the server cannot make one that opens, and the reason says so.
/// - An asset is stored under ``DataKey/assetID(sha256:)``; each chunk is sealed with its asset
///   id, index and the chunk count, so that a chunk from another asset, another place or a
///   truncated asset does not open.
struct RowCipher: Sendable {
    let key: DataKey

    /// What `record_type` holds on an encrypted server (the type itself is sealed).
    static let sealedType = "sealed"

    /// The name of the row of `recordName` on the server.
    func rowID(_ recordName: String) throws(SyncError) -> String {
        do { return try key.rowID(recordName) } catch { throw SyncError(error) }
    }

    /// The keyed hash of an origin, as the server compares it.
    func originID(_ origin: String) throws(SyncError) -> String {
        do { return try key.rowID("origin\u{0}" + origin) } catch { throw SyncError(error) }
    }

    /// The name of an asset's chunks and row on the server.
    func assetID(_ sha256: String) throws(SyncError) -> String {
        do { return try key.assetID(sha256: sha256) } catch { throw SyncError(error) }
    }

    /// The sealed envelope of `change`, written as row `rowID` at `seq`.
    func seal(_ change: PushChange, rowID: String, seq: Int64) throws(SyncError) -> [UInt8] {
        let envelope = Envelope(
            recordName: change.recordName, recordType: change.recordType, origin: change.origin, payload: change.payload?.jsonText)
        return try seal(envelope, rowID: rowID, seq: seq)
    }

    /// The sealed `envelope`, written as row `rowID` at `seq`.
    func seal(_ envelope: Envelope, rowID: String, seq: Int64) throws(SyncError) -> [UInt8] {
        do {
            return try AEAD.seal(PaddedLength.padded(envelope.bytes), key: key.recordKey, associatedData: Self.rowData(rowID, seq))
        } catch { throw SyncError(error) }
    }

    /// Opens the row `rowID` at `seq`: the record it holds, or why it cannot be read (set aside).
    func open(rowID: String, seq: Int64, sealed: [UInt8]) -> Result<ServerRecord, UnreadableReason> {
        let plain: [UInt8]
        do { plain = try AEAD.open(sealed, key: key.recordKey, associatedData: Self.rowData(rowID, seq)) } catch {
            return .failure(UnreadableReason(Self.notOpened))
        }
        guard let content = PaddedLength.unpadded(plain), let envelope = Envelope(content) else {
            return .failure(UnreadableReason("an encrypted row that opens but does not hold a record (a client's bug)"))
        }
        guard (try? self.rowID(envelope.recordName)) == rowID else {
            return .failure(UnreadableReason("an encrypted row whose record is not the one its row names (a client's bug)"))
        }
        var payload: RecordPayload?
        if let text = envelope.payload {
            do { payload = try RecordPayload(jsonText: text, recordName: envelope.recordName) } catch {
                guard case .damagedServerRecord(_, let reason) = error else {
                    return .failure(UnreadableReason("an unreadable payload"))
                }
                return .failure(UnreadableReason(reason, recordName: envelope.recordName, recordType: envelope.recordType))
            }
        }
        return .success(
            ServerRecord(
                recordName: envelope.recordName, recordType: envelope.recordType, seq: seq, payload: payload, origin: envelope.origin))
    }

    /// Why a sealed row or chunk did not open.
    static let notOpened =
        "does not open with this server's key: altered, forged, moved from another record, replayed at another"
        + " version or copied from another server (set aside; the local record is kept as it is)"

    /// The sealed chunk `index` of `count` of the asset `assetID`.
    func sealChunk(_ bytes: [UInt8], assetID: String, index: Int, count: Int) throws(SyncError) -> [UInt8] {
        do {
            return try AEAD.seal(
                PaddedLength.padded(bytes), key: key.assetKey, associatedData: Self.chunkData(assetID, index: index, count: count))
        } catch { throw SyncError(error) }
    }

    /// The bytes of a sealed chunk; nil when it does not open (or holds another length than `expected`).
    func openChunk(_ sealed: [UInt8], assetID: String, index: Int, count: Int, expected: Int) -> [UInt8]? {
        guard let plain = try? AEAD.open(sealed, key: key.assetKey, associatedData: Self.chunkData(assetID, index: index, count: count)),
            let bytes = PaddedLength.unpadded(plain), bytes.count == expected
        else { return nil }
        return bytes
    }

    /// The size on the server of a sealed chunk of `plainCount` bytes.
    static func sealedChunkSize(_ plainCount: Int) -> Int { PaddedLength.bucket(plainCount + PaddedLength.prefix) + AEAD.overhead }

    private static func rowData(_ rowID: String, _ seq: Int64) -> [UInt8] { Array("notesfs row v1\u{0}\(rowID)\u{0}\(seq)".utf8) }

    private static func chunkData(_ assetID: String, index: Int, count: Int) -> [UInt8] {
        Array("notesfs chunk v1\u{0}\(assetID)\u{0}\(index)\u{0}\(count)".utf8)
    }

    /// Why a row is set aside, and the record it names when it opened that far.
    struct UnreadableReason: Error {
        var reason: String
        var recordName: String?
        var recordType: String?
        init(_ reason: String, recordName: String? = nil, recordType: String? = nil) {
            self.reason = reason
            self.recordName = recordName
            self.recordType = recordType
        }
    }

    /// What one sealed row holds, framed as four length-prefixed fields (a flag tells a
    /// tombstone's missing payload from an empty one).
    struct Envelope: Equatable {
        var recordName: String
        var recordType: String
        var origin: String
        /// The payload's JSON text; nil for a tombstone.
        var payload: String?

        init(recordName: String, recordType: String, origin: String, payload: String?) {
            self.recordName = recordName
            self.recordType = recordType
            self.origin = origin
            self.payload = payload
        }

        var bytes: [UInt8] {
            var out: [UInt8] = []
            for field in [recordName, recordType, origin] { Self.append(Array(field.utf8), to: &out) }
            out.append(payload == nil ? 0 : 1)
            Self.append(Array((payload ?? "").utf8), to: &out)
            return out
        }

        /// Reads an envelope; nil when `bytes` is not one (every length checked against what is left).
        init?(_ bytes: [UInt8]) {
            var rest = bytes[...]
            func field() -> String? {
                guard rest.count >= 4 else { return nil }
                let length = rest.prefix(4).reduce(0) { $0 << 8 | Int($1) }
                rest = rest.dropFirst(4)
                guard length <= rest.count else { return nil }
                defer { rest = rest.dropFirst(length) }
                return String(validating: rest.prefix(length), as: UTF8.self)
            }
            guard let name = field(), let type = field(), let origin = field(), let flag = rest.first, flag <= 1 else { return nil }
            rest = rest.dropFirst()
            guard let payload = field(), rest.isEmpty, !name.isEmpty, !type.isEmpty else { return nil }
            self.init(recordName: name, recordType: type, origin: origin, payload: flag == 1 ? payload : nil)
        }

        private static func append(_ field: [UInt8], to out: inout [UInt8]) {
            let length = UInt32(clamping: field.count)
            out += [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)]
            out += field
        }
    }
}

/// Lengths padded to buckets, so that the server learns a sealed value's size only roughly:
/// Padmé (Nikitin et al., "Reducing Metadata Leakage from Encrypted Files and Communication with
/// PURBs", 2019) rounds a length L to keep only its top ⌊log₂ ⌊log₂ L⌋⌋ + 1 bits, at most 12% more
/// bytes, leaking O(log log L) bits; nothing is smaller than 256 bytes.
enum PaddedLength {
    /// The smallest bucket.
    static let minimum = 256
    /// Bytes of the length prefix in a padded value.
    static let prefix = 4

    /// The bucket of a value of `length` bytes (prefix included).
    static func bucket(_ length: Int) -> Int {
        guard length > minimum else { return minimum }
        let exponent = Int.bitWidth - 1 - length.leadingZeroBitCount  // ⌊log₂ L⌋
        let kept = Int.bitWidth - exponent.leadingZeroBitCount  // ⌊log₂ E⌋ + 1
        let mask = (1 << (exponent - kept)) - 1
        return (length + mask) & ~mask
    }

    /// `bytes` behind a 4-byte big-endian length, then zeros up to its bucket.
    static func padded(_ bytes: [UInt8]) -> [UInt8] {
        let length = UInt32(clamping: bytes.count)
        var out = [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)]
        out.reserveCapacity(bucket(bytes.count + prefix))
        out += bytes
        out += [UInt8](repeating: 0, count: bucket(bytes.count + prefix) - out.count)
        return out
    }

    /// The bytes `padded` held; nil when the length prefix does not fit.
    static func unpadded(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count >= prefix else { return nil }
        let length = bytes.prefix(prefix).reduce(0) { $0 << 8 | Int($1) }
        guard length <= bytes.count - prefix else { return nil }
        return Array(bytes[prefix..<(prefix + length)])
    }
}

import Foundation

/// What the store keeps in memory for every record: system fields, small fields, sizes of large ones.
///
/// Answers listings (`ls -l`, folder contents) without reading record files. Large values (long
/// strings such as a note's text, big byte blobs) are not held; their byte size is in ``sizes``.
public struct RecordMetadata: Sendable, Hashable {
    /// The record with only its small fields (a partial record: ``Record/omittedSizes`` names the others).
    public internal(set) var record: Record
    /// Byte size (UTF-8 for strings) of each field left out of ``record``.
    public var sizes: [String: Int] { record.omittedSizes }
    /// The commit sequence number that last saved the record.
    public internal(set) var seq: UInt64

    public var recordID: RecordID { record.recordID }
    public var recordType: String { record.recordType }
    public var identity: UInt64 { record.identity ?? 0 }

    /// Byte size of a field's value, whether or not it is held in memory.
    public func byteCount(of key: String) -> Int? {
        if let size = record.omitted[key] { return size }
        return record.fields[key].map(Self.byteCount)
    }

    /// Whether `key` is left out of ``record`` (read the full record for it).
    public func isLarge(_ key: String) -> Bool { record.omitted[key] != nil }

    static let smallStringLimit = 256
    static let smallBytesLimit = 64
    static let smallListLimit = 64

    /// The metadata of a saved record: a full one, or a partial one whose omitted fields keep their sizes.
    init(savedRecord: Record, seq: UInt64) {
        var small = savedRecord
        for (key, value) in savedRecord.fields where !Self.isSmall(value) {
            small.omitted[key] = Self.byteCount(value)
            small.fields[key] = nil
        }
        small.changedKeys = []
        self.record = small
        self.seq = seq
    }

    init(record: Record, sizes: OmittedFields, seq: UInt64) {
        var record = record
        record.omitted = sizes
        self.record = record
        self.seq = seq
    }

    static func isSmall(_ value: FieldValue) -> Bool {
        switch value {
        case .string(let s): s.utf8.count <= smallStringLimit
        case .bytes(let d): d.count <= smallBytesLimit
        case .list(let items):
            // References and assets are always kept: the reference index and asset counts need them.
            items.allSatisfy { $0.referenceValue != nil || $0.assetValue != nil }
                || (items.count <= smallListLimit && items.allSatisfy(isSmall))
        default: true
        }
    }

    static func byteCount(_ value: FieldValue) -> Int {
        switch value {
        case .string(let s): s.utf8.count
        case .bytes(let d): d.count
        case .asset(let a): Int(a.size)
        // Saturating: sizes come from disk (an asset may claim Int64.max bytes).
        case .list(let items):
            items.reduce(0) { total, item in
                let (sum, overflow) = total.addingReportingOverflow(byteCount(item))
                return overflow ? .max : sum
            }
        case .int64, .double, .date: 8
        case .bool: 1
        case .reference(let r): r.recordID.recordName.utf8.count
        }
    }
}

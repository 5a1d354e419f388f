import Foundation
import RecordStore

/// A version's text kept as an edit of its newer neighbour's (``VersionCompaction``): the first
/// `prefix` bytes of the base's text, then `middle`, then the base's last `suffix` bytes. The
/// base is another version of the same note (by record name); the chain ends at a version that
/// keeps its whole text. Cuts fall on UTF-8 scalar boundaries, so `middle` is text.
///
/// Stored in the version's record as `deltaBase`, `deltaPrefix`, `deltaSuffix`, `deltaText`, in
/// place of `text`; a record holding `text` is whole whatever else it holds.
public struct VersionDelta: Equatable, Sendable {
    public var base: String
    public var prefix: Int
    public var suffix: Int
    public var middle: String

    static let keys = ["deltaBase", "deltaPrefix", "deltaSuffix", "deltaText"]
    /// The longest chain of deltas a read follows (compaction makes at most ``maxDepth``).
    public static let maxDepth = 32
    /// What a delta's fields cost beside its middle (names and numbers), in bytes.
    static let overhead = 120

    /// The delta `record` holds; nil when it holds its text (or none of the delta's fields).
    /// - Throws: ``NotesError/invalidField(_:key:)`` when a field is of the wrong type,
    ///   ``NotesError/damagedVersion(_:reason:)`` when an offset is out of range.
    init?(record: Record) throws(NotesError) {
        guard record["text"] == nil, record["deltaBase"] != nil else { return nil }
        guard let base = record["deltaBase"]?.stringValue, !base.isEmpty else { throw .invalidField(record.recordID, key: "deltaBase") }
        func offset(_ key: String) throws(NotesError) -> Int {
            guard let value = record[key]?.int64Value else { throw .invalidField(record.recordID, key: key) }
            guard value >= 0, value <= Int64(Int32.max) else {
                throw .damagedVersion(record.recordID, reason: "its \(key) \(value) is out of range (0 to \(Int32.max))")
            }
            return Int(value)
        }
        let prefix = try offset("deltaPrefix")
        let suffix = try offset("deltaSuffix")
        guard let middle = record["deltaText"]?.stringValue else { throw .invalidField(record.recordID, key: "deltaText") }
        self.init(base: base, prefix: prefix, suffix: suffix, middle: middle)
    }

    init(base: String, prefix: Int, suffix: Int, middle: String) {
        (self.base, self.prefix, self.suffix, self.middle) = (base, prefix, suffix, middle)
    }

    /// The edit that makes `text` from `baseText`: their common prefix and suffix, cut back to
    /// scalar boundaries, and what lies between.
    public init(text: String, baseText: String, base: String) {
        let a = Array(text.utf8)
        let b = Array(baseText.utf8)
        func isContinuation(_ bytes: [UInt8], _ i: Int) -> Bool { i < bytes.count && bytes[i] & 0xC0 == 0x80 }
        var prefix = 0
        while prefix < a.count, prefix < b.count, a[prefix] == b[prefix] { prefix += 1 }
        while prefix > 0, isContinuation(a, prefix) || isContinuation(b, prefix) { prefix -= 1 }
        var suffix = 0
        while suffix < a.count - prefix, suffix < b.count - prefix, a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
        while suffix > 0, isContinuation(a, a.count - suffix) || isContinuation(b, b.count - suffix) { suffix -= 1 }
        self.init(base: base, prefix: prefix, suffix: suffix, middle: String(decoding: a[prefix..<(a.count - suffix)], as: UTF8.self))
    }

    /// The text this delta makes from its base's text; nil when it does not fit that text (a base
    /// that is not the one it was made from) or the bytes are not UTF-8.
    public func apply(to baseText: String) -> String? {
        let b = Array(baseText.utf8)
        guard prefix <= b.count, suffix <= b.count - prefix else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(prefix + middle.utf8.count + suffix)
        bytes += b[0..<prefix]
        bytes += middle.utf8
        bytes += b[(b.count - suffix)...]
        return String(validating: bytes, as: UTF8.self)
    }

    /// The bytes the delta takes in its record (its middle and its fields).
    var storedBytes: Int { middle.utf8.count + Self.overhead }

    /// `record` keeping this delta in place of its text.
    public func store(in record: Record) -> Record {
        var record = record
        record["text"] = nil
        record["deltaBase"] = .string(base)
        record["deltaPrefix"] = .int64(Int64(prefix))
        record["deltaSuffix"] = .int64(Int64(suffix))
        record["deltaText"] = .string(middle)
        return record
    }

    /// `record` keeping `text` whole (a delta's fields removed).
    static func whole(_ record: Record, text: String) -> Record {
        var record = record
        for key in keys { record[key] = nil }
        record["text"] = .string(text)
        return record
    }
}

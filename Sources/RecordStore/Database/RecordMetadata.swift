import Foundation

/// What the store keeps in memory for every record: system fields, small fields, sizes of large ones.
///
/// Answers listings (`ls -l`, folder contents) without reading record files. Large values (long
/// strings such as a note's text, big byte blobs) are not held; their byte size is in ``sizes``.
///
/// The small fields are held as an array of key-value pairs sorted by key, not as the
/// `[String: FieldValue]` of a ``Record``: a dictionary of 2 small fields takes about 283 bytes of
/// heap, the array about 32 + 48 per field, and the index holds one of these per record (at
/// 1,000,000 notes the dictionaries were about half the memory of an open database). ``record``
/// rebuilds the dictionary, so the hot paths (queries, sorting, the index, listings) read the
/// accessors here instead: ``field(_:)``, ``recordChangeTag``, ``modificationDate`` and the rest.
public struct RecordMetadata: Sendable, Hashable {
    /// One small field (the array sorted by key is canonical, so equal metadata hash equally).
    struct SmallField: Sendable, Hashable {
        var key: String
        var value: FieldValue
    }

    // The record's system fields, each stored apart (not as a `Record`, whose fields dictionary,
    // changed keys and save-time flags the index never needs): 128 bytes a record, not 176, and
    // fewer references for a copy to retain (a query copies the metadata it returns).
    public let recordID: RecordID
    public let recordType: String
    public let recordChangeTag: String?
    /// Seconds since the reference date; meaningful only when `present` holds the date.
    private let creationSeconds: Double
    private let modificationSeconds: Double
    /// Meaningful only when `present` holds it (0 when it does not).
    private let identityValue: UInt64
    private let present: Present
    /// The large fields left out, with their sizes.
    let omitted: OmittedFields
    /// The small fields, sorted by key.
    private var smallFields: ContiguousArray<SmallField>
    /// The commit sequence number that last saved the record.
    public internal(set) var seq: UInt64

    /// Which of the optional system fields the record has.
    private struct Present: OptionSet, Sendable, Hashable {
        let rawValue: UInt8
        static let creation = Present(rawValue: 1)
        static let modification = Present(rawValue: 2)
        static let identity = Present(rawValue: 4)
    }

    /// The record with only its small fields (a partial record: ``Record/omittedSizes`` names the
    /// others). Rebuilt on every access: read the accessors of this type where they suffice.
    public var record: Record { record(reservingCapacity: 0) }

    /// ``record``, its fields' dictionary with room for `extra` more (the large fields a merge adds).
    func record(reservingCapacity extra: Int) -> Record {
        var fields = [String: FieldValue](minimumCapacity: smallFields.count + extra)
        for field in smallFields { fields[field.key] = field.value }
        var record = Record(
            recordID: recordID, recordType: recordType, changeTag: recordChangeTag, creationDate: creationDate,
            modificationDate: modificationDate, identity: storedIdentity, fields: fields)
        record.omitted = omitted
        return record
    }

    /// Byte size (UTF-8 for strings) of each field left out of ``record``.
    public var sizes: [String: Int] { omitted.dictionary }

    public var identity: UInt64 { identityValue }
    /// The record's identity as ``Record/identity`` reads it (`nil` for none).
    var storedIdentity: UInt64? { present.contains(.identity) ? identityValue : nil }
    public var creationDate: Date? {
        present.contains(.creation) ? Date(timeIntervalSinceReferenceDate: creationSeconds) : nil
    }
    public var modificationDate: Date? {
        present.contains(.modification) ? Date(timeIntervalSinceReferenceDate: modificationSeconds) : nil
    }
    /// Whether large fields are left out of ``record`` (see ``Record/isPartial``).
    public var isPartial: Bool { !omitted.isEmpty }

    /// A small field's value, as `record[key]` reads it (`nil` for a large or missing field).
    public func field(_ key: String) -> FieldValue? {
        // Binary search: records have few fields, but the comparison is all a lookup costs.
        var low = 0
        var high = smallFields.count
        while low < high {
            let middle = (low + high) / 2
            let candidate = smallFields[middle].key
            if candidate == key { return smallFields[middle].value }
            if candidate < key { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// Calls `body` with every reference the small fields hold and its key, allocating nothing.
    func forEachReference(_ body: (_ key: String, _ reference: Reference) -> Void) {
        for field in smallFields { field.value.forEachReference { body(field.key, $0) } }
    }

    /// Hands every reference of the small fields (in lists too) to `shared` with its field's key,
    /// and replaces the record name it holds with the equal string `shared` returns: the index
    /// passes one instance per target, so that the 5,000 notes of a folder hold its name once (a
    /// UUID's 36 bytes take an 80-byte heap block each), and records the reference as it goes.
    mutating func shareReferenceNames(_ shared: (_ key: String, _ target: String) -> String) {
        func share(_ value: inout FieldValue, key: String) {
            switch value {
            case .reference(var reference):
                reference.recordID.recordName = shared(key, reference.recordID.recordName)
                value = .reference(reference)
            case .list(var items):
                // Most lists hold no reference: they are left as they are.
                guard items.contains(where: { if case .reference = $0 { true } else if case .list = $0 { true } else { false } }) else {
                    return
                }
                value = .list([])
                for i in items.indices { share(&items[i], key: key) }
                value = .list(items)
            default:
                break
            }
        }
        for i in smallFields.indices {
            switch smallFields[i].value {
            case .reference, .list: share(&smallFields[i].value, key: smallFields[i].key)
            default: continue
            }
        }
    }

    /// Calls `body` with every small string field (a string at the top level of a field) and its key.
    func forEachSmallString(_ body: (_ key: String, _ value: String) -> Void) {
        for field in smallFields { if case .string(let value) = field.value { body(field.key, value) } }
    }

    /// Every asset in the small fields (an asset used twice is listed twice).
    var assets: [Asset] { smallFields.flatMap(\.value.assets) }

    /// Calls `body` for every asset in the small fields, as ``assets`` lists them.
    func forEachAsset(_ body: (Asset) -> Void) {
        for field in smallFields { field.value.forEachAsset(body) }
    }

    /// Writes the index line of this metadata (``RecordCoding/write(_:seq:into:)`` of ``record``
    /// and ``seq``), without rebuilding the record's fields.
    func write(into w: inout JSONWriter) {
        RecordCoding.write(
            RecordCoding.SystemFields(
                name: recordID.recordName, type: recordType, tag: recordChangeTag, identity: storedIdentity,
                created: creationDate?.timeIntervalSince1970, modified: modificationDate?.timeIntervalSince1970, seq: seq,
                sizes: omitted),
            sortedFields: smallFields.lazy.map { (key: $0.key, value: $0.value) }, into: &w)
    }

    /// Byte size of a field's value, whether or not it is held in memory.
    public func byteCount(of key: String) -> Int? {
        if let size = omitted[key] { return size }
        return field(key).map(Self.byteCount)
    }

    /// Whether `key` is left out of ``record`` (read the full record for it).
    public func isLarge(_ key: String) -> Bool { omitted[key] != nil }

    static let smallStringLimit = 256
    static let smallBytesLimit = 64
    static let smallListLimit = 64

    /// The metadata of a saved record: a full one, or a partial one whose omitted fields keep their sizes.
    init(savedRecord: Record, seq: UInt64) {
        var omitted = savedRecord.omitted
        var small = ContiguousArray<SmallField>()
        small.reserveCapacity(savedRecord.fields.count)
        for (key, value) in savedRecord.fields {
            if Self.isSmall(value) {
                small.append(SmallField(key: key, value: value))
            } else {
                omitted[key] = Self.byteCount(value)
            }
        }
        self.init(systemFields: savedRecord, omitted: omitted, smallFields: small, seq: seq)
    }

    init(record: Record, sizes: OmittedFields, seq: UInt64) {
        var small = ContiguousArray<SmallField>()
        small.reserveCapacity(record.fields.count)
        for (key, value) in record.fields { small.append(SmallField(key: key, value: value)) }
        self.init(systemFields: record, omitted: sizes, smallFields: small, seq: seq)
    }

    /// The metadata of an index snapshot line: `record` without fields, its small fields as they
    /// came (a key given twice keeps its last value, as a dictionary would), sizes of the others.
    init(record: Record, sizes: OmittedFields, smallFields fields: [SmallField], seq: UInt64) {
        if zip(fields, fields.dropFirst()).allSatisfy({ $0.key < $1.key }) {
            // As written (by key): stored at their exact size, not sorted again.
            self.init(systemFields: record, omitted: sizes, smallFields: ContiguousArray(fields), seq: seq, sorted: true)
        } else {
            var unique: [String: FieldValue] = [:]
            for field in fields { unique[field.key] = field.value }
            var small = ContiguousArray<SmallField>()
            small.reserveCapacity(unique.count)
            for (key, value) in unique { small.append(SmallField(key: key, value: value)) }
            self.init(systemFields: record, omitted: sizes, smallFields: small, seq: seq)
        }
    }

    /// The system fields of `record` (its fields are ignored), with these omitted sizes and small fields.
    private init(
        systemFields record: Record, omitted: OmittedFields, smallFields: ContiguousArray<SmallField>, seq: UInt64, sorted: Bool = false
    ) {
        recordID = record.recordID
        recordType = record.recordType
        recordChangeTag = record.recordChangeTag
        var present: Present = []
        if record.creationDate != nil { present.insert(.creation) }
        if record.storedModificationDate != nil { present.insert(.modification) }
        if record.identity != nil { present.insert(.identity) }
        creationSeconds = record.creationDate?.timeIntervalSinceReferenceDate ?? 0
        modificationSeconds = record.storedModificationDate?.timeIntervalSinceReferenceDate ?? 0
        self.present = present
        identityValue = record.identity ?? 0
        self.omitted = omitted
        var smallFields = smallFields
        if !sorted { smallFields.sort { $0.key < $1.key } }
        self.smallFields = smallFields
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

import Foundation

/// Why a stored record could not be read back (the file is damaged).
struct RecordDecodingError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Record ↔ JSON, the one on-disk form used by record files, journal lines and the index snapshot.
///
/// ```json
/// {"recordName":"N1","recordType":"Note","recordChangeTag":"7","identity":18,
///  "creationDate":1764453442.5,"modificationDate":1764453442.5,
///  "fields":{"title":{"type":"string","value":"Hello"},
///            "folder":{"type":"reference","value":{"recordName":"F1","action":"deleteSelf"}}}}
/// ```
enum RecordCoding {
    static func encode(_ record: Record) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        write(record, seq: nil, into: &writer)
        return writer.bytes
    }

    /// Writes `record`, with the `sizes` of the fields a partial record leaves out
    /// (``Record/omittedSizes``: none for a full record, so a record file has none) and, for an
    /// index snapshot line, its `seq`.
    static func write(_ record: Record, seq: UInt64?, into w: inout JSONWriter) {
        write(record, sortedFields: record.fields.sorted(by: { $0.key < $1.key }), seq: seq, into: &w)
    }

    /// ``write(_:seq:into:)`` with the fields given apart, sorted by key (the index's metadata
    /// holds them so, and `record.fields` is then ignored).
    static func write(
        _ record: Record, sortedFields: some Sequence<(key: String, value: FieldValue)>, seq: UInt64?, into w: inout JSONWriter
    ) {
        write(
            SystemFields(
                name: record.recordID.recordName, type: record.recordType, tag: record.recordChangeTag, identity: record.identity,
                created: record.creationDate?.timeIntervalSince1970, modified: record.storedModificationDate?.timeIntervalSince1970,
                seq: seq, sizes: record.omitted),
            sortedFields: sortedFields, into: &w)
    }

    /// What a record's JSON holds besides its fields, as written and read (dates in seconds since
    /// 1970; `seq` only in snapshot lines).
    struct SystemFields {
        var name: String
        var type: String
        var tag: String?
        var identity: UInt64?
        var created: Double?
        var modified: Double?
        var seq: UInt64?
        /// The sizes of the large fields a partial record leaves out.
        var sizes: OmittedFields

        func record(fields: [String: FieldValue]) -> Record {
            Record(
                recordID: RecordID(recordName: name), recordType: type, changeTag: tag,
                creationDate: created.map(Date.init(timeIntervalSince1970:)),
                modificationDate: modified.map(Date.init(timeIntervalSince1970:)), identity: identity, fields: fields)
        }
    }

    /// The one writer of a record's JSON: from a record (``write(_:seq:into:)``) and from the
    /// index's metadata (a snapshot line, ``RecordMetadata/write(into:)``), which has no record.
    static func write(_ system: SystemFields, sortedFields: some Sequence<(key: String, value: FieldValue)>, into w: inout JSONWriter) {
        var first = true
        w.raw("{")
        w.key("recordName", first: &first)
        w.string(system.name)
        w.key("recordType", first: &first)
        w.string(system.type)
        if let tag = system.tag {
            w.key("recordChangeTag", first: &first)
            w.string(tag)
        }
        if let identity = system.identity {
            w.key("identity", first: &first)
            w.number(identity)
        }
        if let seconds = system.created {
            w.key("creationDate", first: &first)
            w.number(seconds)
        }
        if let seconds = system.modified {
            w.key("modificationDate", first: &first)
            w.number(seconds)
        }
        if let seq = system.seq {
            w.key("seq", first: &first)
            w.number(seq)
        }
        w.key("fields", first: &first)
        w.raw("{")
        var firstField = true
        for (key, value) in sortedFields {
            w.key(named: key, first: &firstField)
            write(value, into: &w)
        }
        w.raw("}")
        let sizes = system.sizes
        if !sizes.isEmpty {
            w.key("sizes", first: &first)
            w.raw("{")
            var firstSize = true
            for key in sizes.keys.sorted() {
                w.key(named: key, first: &firstSize)
                w.number(Int64(sizes[key] ?? 0))
            }
            w.raw("}")
        }
        w.raw("}")
    }

    static func write(_ value: FieldValue, into w: inout JSONWriter) {
        var first = true
        w.raw("{")
        w.key("type", first: &first)
        w.string(value.typeName)
        w.key("value", first: &first)
        switch value {
        case .string(let s): w.string(s)
        case .int64(let i): w.number(i)
        case .double(let d): w.number(d)
        case .bool(let b): w.bool(b)
        case .date(let d): w.number(d.timeIntervalSince1970)
        case .bytes(let data): w.string(data.base64EncodedString())
        case .asset(let asset):
            var f = true
            w.raw("{")
            w.key("sha256", first: &f)
            w.string(asset.sha256)
            w.key("size", first: &f)
            w.number(asset.size)
            w.raw("}")
        case .reference(let ref):
            var f = true
            w.raw("{")
            w.key("recordName", first: &f)
            w.string(ref.recordID.recordName)
            w.key("action", first: &f)
            w.string(ref.action.rawValue)
            w.raw("}")
        case .list(let items):
            w.raw("[")
            for (i, item) in items.enumerated() {
                if i > 0 { w.raw(",") }
                write(item, into: &w)
            }
            w.raw("]")
        }
        w.raw("}")
    }

    static func decode(_ json: JSON) throws(RecordDecodingError) -> Record {
        guard case .object = json else { throw RecordDecodingError("not a JSON object") }
        let object = json
        guard let name = object["recordName"]?.string, !name.isEmpty else {
            throw RecordDecodingError("missing recordName")
        }
        guard let type = object["recordType"]?.string, !type.isEmpty else {
            throw RecordDecodingError("missing recordType")
        }
        var fields: [String: FieldValue] = [:]
        if let fieldsJSON = object["fields"] {
            guard let members = fieldsJSON.object else { throw RecordDecodingError("fields is not an object") }
            fields.reserveCapacity(members.count)
            for member in members {
                do { fields[member.key] = try decodeValue(member.value) } catch {
                    throw RecordDecodingError("field \(member.key): \(error.description)")
                }
            }
        }
        let record = Record(
            recordID: RecordID(recordName: name), recordType: type,
            changeTag: try optional(object["recordChangeTag"], "recordChangeTag", \.string),
            creationDate: try optional(object["creationDate"], "creationDate", \.double).map(Date.init(timeIntervalSince1970:)),
            modificationDate: try optional(object["modificationDate"], "modificationDate", \.double).map(
                Date.init(timeIntervalSince1970:)),
            identity: try optional(object["identity"], "identity", \.uint64),
            fields: fields)
        for date in [record.creationDate, record.storedModificationDate].compactMap({ $0 }) {
            if let problem = FieldValue.dateProblem(date.timeIntervalSince1970) { throw RecordDecodingError(problem) }
        }
        return record
    }

    /// The `sizes` and `seq` members of an index snapshot line.
    static func decodeIndexExtras(_ json: JSON) throws(RecordDecodingError) -> (sizes: OmittedFields, seq: UInt64) {
        var sizes = OmittedFields()
        for member in json["sizes"]?.object ?? [] {
            guard let n = member.value.int64 else { throw RecordDecodingError("sizes.\(member.key) is not a number") }
            sizes[member.key] = Int(n)
        }
        return (sizes, json["seq"]?.uint64 ?? 0)
    }

    private static func optional<T>(_ json: JSON?, _ name: String, _ get: (JSON) -> T?) throws(RecordDecodingError) -> T? {
        guard let json else { return nil }
        guard let value = get(json) else { throw RecordDecodingError("\(name) has the wrong type") }
        return value
    }

    /// One field value (`depth`: see ``readFieldValue(_:depth:)``).
    static func decodeValue(_ json: JSON, depth: Int = 1) throws(RecordDecodingError) -> FieldValue {
        guard let type = json["type"]?.string, let value = json["value"] else {
            throw RecordDecodingError("expected {\"type\":…,\"value\":…}")
        }
        func wrong() -> RecordDecodingError { RecordDecodingError("value is not a valid \(type)") }
        switch type {
        case "string":
            guard let s = value.string else { throw wrong() }
            return .string(s)
        case "int64":
            guard let i = value.int64 else { throw wrong() }
            return .int64(i)
        case "double":
            guard let d = value.double else { throw wrong() }
            return .double(d)
        case "bool":
            guard let b = value.bool else { throw wrong() }
            return .bool(b)
        case "date":
            guard let d = value.double else { throw wrong() }
            if let problem = FieldValue.dateProblem(d) { throw RecordDecodingError(problem) }
            return .date(Date(timeIntervalSince1970: d))
        case "bytes":
            guard let s = value.string, let data = Data(base64Encoded: s) else { throw wrong() }
            return .bytes(data)
        case "asset":
            guard let hash = value["sha256"]?.string, let size = value["size"]?.int64 else { throw wrong() }
            let asset = Asset(sha256: hash, size: size)
            if let problem = asset.validityProblem { throw RecordDecodingError(problem) }
            return .asset(asset)
        case "reference":
            guard let name = value["recordName"]?.string, !name.isEmpty,
                let action = value["action"]?.string.flatMap(Reference.Action.init(rawValue:))
            else { throw wrong() }
            return .reference(Reference(recordID: RecordID(recordName: name), action: action))
        case "list":
            guard let items = value.array else { throw wrong() }
            guard depth <= FieldValue.maximumListDepth else {
                throw RecordDecodingError("lists nested deeper than \(FieldValue.maximumListDepth)")
            }
            var values: [FieldValue] = []
            values.reserveCapacity(items.count)
            for item in items { values.append(try decodeValue(item, depth: depth + 1)) }
            return .list(values)
        default:
            throw RecordDecodingError("unknown field type \(type)")
        }
    }
}

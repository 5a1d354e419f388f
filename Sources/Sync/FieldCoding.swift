import Foundation
import RecordStore

/// A record's fields, modification and creation dates as the server stores them: a JSON object
/// `{"created": "…", "modified": "…", "fields": {key: {"type": …, "value": …}}}` (the `payload`
/// jsonb column; `created` is absent from payloads pushed before it was synced).
///
/// Every number and date is a string (jsonb keeps numbers as `numeric`, which would turn an
/// `Int64` or a `Double` into something else on the way back); a string holding NUL, which jsonb
/// refuses, is sent as base64 under `base64`.
public struct RecordPayload: Sendable, Equatable {
    /// What this notesfs can read of a payload: raise it when decoding learns something new (a
    /// field type), so that rows an older reader set aside are fetched and tried again.
    public static let readerVersion = 1

    public var fields: [String: FieldValue]
    public var modificationDate: Date?
    /// When the record was first saved, on whichever machine made it: every replica keeps it, so
    /// that the mounts agree on which of two same-titled notes is the older (it keeps the name).
    public var creationDate: Date?

    public init(fields: [String: FieldValue], modificationDate: Date?, creationDate: Date? = nil) {
        self.fields = fields
        self.modificationDate = modificationDate
        self.creationDate = creationDate
    }

    public init(_ record: Record) {
        self.init(fields: record.fields, modificationDate: record.modificationDate, creationDate: record.creationDate)
    }

    /// The JSON text (keys sorted, so equal payloads encode equally).
    public var jsonText: String {
        var object: [String: Any] = ["fields": fields.mapValues(Self.encode)]
        if let modificationDate { object["modified"] = String(modificationDate.timeIntervalSince1970) }
        if let creationDate { object["created"] = String(creationDate.timeIntervalSince1970) }
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Decodes the JSON text of a payload, and checks every value with the store's own rules
    /// (``RecordStore/FieldValue/validityProblem``, ``RecordStore/Record/validityProblem``): what
    /// passes here is what the store commits and reads back.
    ///
    /// - Throws: ``SyncError/damagedServerRecord(_:reason:)`` naming `recordName`.
    public init(jsonText: String, recordName: String) throws(SyncError) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(jsonText.utf8))) as? [String: Any],
            let fields = object["fields"] as? [String: Any]
        else { throw .damagedServerRecord(recordName, reason: "payload is not a JSON object with fields") }
        var decoded: [String: FieldValue] = [:]
        for (key, value) in fields {
            guard let field = Self.decode(value, depth: 1) else {
                throw .damagedServerRecord(recordName, reason: "field \(key) cannot be decoded")
            }
            if let problem = field.validityProblem ?? ServerValueRules.problem(of: field) {
                throw .damagedServerRecord(recordName, reason: "field \(key): \(problem)")
            }
            decoded[key] = field
        }
        self.fields = decoded
        func date(_ key: String) throws(SyncError) -> Date? {
            guard let value = object[key] else { return nil }
            guard let seconds = (value as? String).flatMap(Double.init) else {
                throw .damagedServerRecord(recordName, reason: "\(key) is not a date")
            }
            let date = Date(timeIntervalSince1970: seconds)
            if let problem = FieldValue.date(date).validityProblem { throw .damagedServerRecord(recordName, reason: "\(key): \(problem)") }
            return date
        }
        self.modificationDate = try date("modified")
        self.creationDate = try date("created")
    }

    static func encode(_ value: FieldValue) -> [String: Any] {
        switch value {
        case .string(let text) where text.contains("\0"): ["type": "string", "base64": Data(text.utf8).base64EncodedString()]
        case .string(let text): ["type": "string", "value": text]
        case .int64(let number): ["type": "int64", "value": String(number)]
        case .double(let number): ["type": "double", "value": String(number)]
        case .bool(let flag): ["type": "bool", "value": flag]
        case .date(let date): ["type": "date", "value": String(date.timeIntervalSince1970)]
        case .bytes(let data): ["type": "bytes", "value": data.base64EncodedString()]
        case .asset(let asset): ["type": "asset", "value": ["sha256": asset.sha256, "size": String(asset.size)]]
        case .reference(let reference):
            ["type": "reference", "value": ["recordName": reference.recordID.recordName, "action": reference.action.rawValue]]
        case .list(let items): ["type": "list", "value": items.map(encode)]
        }
    }

    /// One value of the transport form; nil when it is not one this notesfs knows. `depth` bounds
    /// the recursion into lists (``RecordStore/FieldValue/maximumListDepth``).
    static func decode(_ any: Any, depth: Int) -> FieldValue? {
        guard let object = any as? [String: Any], let type = object["type"] as? String else { return nil }
        let value = object["value"]
        switch type {
        case "string":
            if let base64 = object["base64"] as? String {
                return Data(base64Encoded: base64).map { .string(String(decoding: $0, as: UTF8.self)) }
            }
            return (value as? String).map(FieldValue.string)
        case "int64": return (value as? String).flatMap { Int64($0) }.map(FieldValue.int64)
        case "double": return (value as? String).flatMap { Double($0) }.map(FieldValue.double)
        case "bool": return (value as? Bool).map(FieldValue.bool)
        case "date": return (value as? String).flatMap { Double($0) }.map { .date(Date(timeIntervalSince1970: $0)) }
        case "bytes": return (value as? String).flatMap { Data(base64Encoded: $0) }.map(FieldValue.bytes)
        case "asset":
            guard let asset = value as? [String: Any], let sha256 = asset["sha256"] as? String,
                let size = (asset["size"] as? String).flatMap({ Int64($0) })
            else { return nil }
            return .asset(Asset(sha256: sha256, size: size))
        case "reference":
            guard let reference = value as? [String: Any], let name = reference["recordName"] as? String,
                let action = (reference["action"] as? String).flatMap(Reference.Action.init(rawValue:))
            else { return nil }
            return .reference(Reference(recordID: RecordID(recordName: name), action: action))
        case "list":
            guard let items = value as? [Any], depth <= FieldValue.maximumListDepth else { return nil }
            let decoded = items.compactMap { decode($0, depth: depth + 1) }
            return decoded.count == items.count ? .list(decoded) : nil
        default: return nil
        }
    }
}

extension FieldValue {
    /// Every asset in this value, including those inside lists.
    var assets: [Asset] {
        switch self {
        case .asset(let asset): [asset]
        case .list(let items): items.flatMap(\.assets)
        default: []
        }
    }
}

import Foundation

/// A typed field value, as CloudKit's `CKRecordValue`: JSON on disk keeps the type.
public enum FieldValue: Sendable, Hashable {
    case string(String)
    case int64(Int64)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case bytes(Data)
    /// Boxed (`indirect`): an `Asset` is the only payload over 17 bytes (24), and every value
    /// is as large as the largest payload: the index holds some 7 values a note (8 bytes each
    /// saved), assets are rare.
    indirect case asset(Asset)
    case reference(Reference)
    case list([FieldValue])

    /// The type name used in the JSON form (`{"type": "string", "value": ...}`).
    public var typeName: String {
        switch self {
        case .string: "string"
        case .int64: "int64"
        case .double: "double"
        case .bool: "bool"
        case .date: "date"
        case .bytes: "bytes"
        case .asset: "asset"
        case .reference: "reference"
        case .list: "list"
        }
    }

    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    public var int64Value: Int64? { if case .int64(let v) = self { v } else { nil } }
    public var doubleValue: Double? { if case .double(let v) = self { v } else { nil } }
    public var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    public var dateValue: Date? { if case .date(let v) = self { v } else { nil } }
    public var bytesValue: Data? { if case .bytes(let v) = self { v } else { nil } }
    public var assetValue: Asset? { if case .asset(let v) = self { v } else { nil } }
    public var referenceValue: Reference? { if case .reference(let v) = self { v } else { nil } }
    public var listValue: [FieldValue]? { if case .list(let v) = self { v } else { nil } }

    /// Every reference in this value, including those inside lists.
    var references: [Reference] {
        switch self {
        case .reference(let r): [r]
        case .list(let items): items.flatMap(\.references)
        default: []
        }
    }

    /// Calls `body` with every reference in this value (itself or in its list), allocating nothing.
    public func forEachReference(_ body: (Reference) -> Void) {
        switch self {
        case .reference(let r): body(r)
        case .list(let items): for item in items { item.forEachReference(body) }
        default: break
        }
    }
}

extension FieldValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension FieldValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .int64(value) }
}

extension FieldValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension FieldValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

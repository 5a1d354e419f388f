import Foundation
import RecordStore

/// The extended attributes a file keeps (`user.*`, `trusted.*`, `security.*` and the POSIX ACLs'
/// `system.posix_acl_*`), in its record's `xattrs` field: a list of `[name, value]` pairs, the
/// name a string and the value any bytes. They belong to the file, so they stay through renames
/// and saves, sync like every field and come back with an undelete.
///
/// Bounds (those of Linux's VFS and ext4, so a tool that copies xattrs meets the same answers):
/// a name of 1 to 255 bytes, a value of at most 64 KiB, and at most 256 KiB and 1,024 attributes
/// in all per file.
public struct ExtendedAttributes: Sendable, Hashable {
    /// The record field that holds them.
    public static let fieldKey = "xattrs"
    public static let maximumNameBytes = 255
    public static let maximumValueBytes = 65_536
    public static let maximumTotalBytes = 262_144
    public static let maximumCount = 1_024

    /// Name → value.
    public private(set) var values: [String: [UInt8]] = [:]

    public init() {}

    /// The attributes `record` keeps; none when it keeps none (or the field is damaged: see
    /// ``validityProblem(of:)``).
    public init(_ record: Record) {
        self = (try? Self.read(record[Self.fieldKey])) ?? ExtendedAttributes()
    }

    /// The names, sorted (what `listxattr` lists).
    public var names: [String] { values.keys.sorted() }
    public var isEmpty: Bool { values.isEmpty }

    public subscript(name: String) -> [UInt8]? { values[name] }

    /// Why `record`'s `xattrs` field cannot be read as attributes within the bounds; nil when it
    /// can, or when it has none.
    public static func validityProblem(of record: Record) -> String? {
        do {
            _ = try read(record[fieldKey])
            return nil
        } catch {
            return error.description
        }
    }

    /// Sets `name` to `value`.
    /// - Parameters:
    ///   - mustExist: fail when `name` has no value (`XATTR_REPLACE`);
    ///   - mustNotExist: fail when it has one (`XATTR_CREATE`).
    /// - Throws: ``ExtendedAttributeError``.
    public mutating func set(
        _ name: String, to value: [UInt8], mustExist: Bool = false, mustNotExist: Bool = false
    ) throws(ExtendedAttributeError) {
        try Self.check(name: name, value: value)
        let old = values[name]
        if mustExist, old == nil { throw .noAttribute }
        if mustNotExist, old != nil { throw .exists }
        let total = totalBytes - (old.map { name.utf8.count + $0.count } ?? 0) + name.utf8.count + value.count
        if total > Self.maximumTotalBytes || (old == nil && values.count >= Self.maximumCount) { throw .noSpace }
        values[name] = value
    }

    /// Removes `name`.
    /// - Throws: ``ExtendedAttributeError/noAttribute`` when it has no value.
    public mutating func remove(_ name: String) throws(ExtendedAttributeError) {
        guard values.removeValue(forKey: name) != nil else { throw .noAttribute }
    }

    /// Writes them into `record` (no field at all when there are none).
    public func write(into record: inout Record) {
        record[Self.fieldKey] =
            values.isEmpty ? nil : .list(names.map { name in .list([.string(name), .bytes(Data(values[name] ?? []))]) })
    }

    private var totalBytes: Int { values.reduce(0) { $0 + $1.key.utf8.count + $1.value.count } }

    private static func check(name: String, value: [UInt8]) throws(ExtendedAttributeError) {
        guard !name.isEmpty, name.utf8.count <= maximumNameBytes, !name.utf8.contains(0) else { throw .badName }
        guard value.count <= maximumValueBytes else { throw .tooLarge }
    }

    private static func read(_ field: FieldValue?) throws(ExtendedAttributeError) -> ExtendedAttributes {
        var attributes = ExtendedAttributes()
        guard let field else { return attributes }
        guard let pairs = field.listValue else { throw .damaged("not a list") }
        for pair in pairs {
            guard let items = pair.listValue, items.count == 2, let name = items[0].stringValue, let value = items[1].bytesValue else {
                throw .damaged("an entry is not a [name, bytes] pair")
            }
            guard attributes.values[name] == nil else { throw .damaged("\(name.debugDescription) appears twice") }
            do { try attributes.set(name, to: Array(value)) } catch { throw .damaged("\(name.debugDescription): \(error)") }
        }
        return attributes
    }
}

/// Why an extended attribute was refused (mapped to errno by the mount).
public enum ExtendedAttributeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Empty, over 255 bytes, or holding NUL (`ERANGE`).
    case badName
    /// A value over 64 KiB (`E2BIG`).
    case tooLarge
    /// No room left in the file's attributes (`ENOSPC`).
    case noSpace
    /// No such attribute (`ENODATA`).
    case noAttribute
    /// It exists and `XATTR_CREATE` was asked (`EEXIST`).
    case exists
    /// The stored field is damaged.
    case damaged(String)

    public var description: String {
        switch self {
        case .badName: "an attribute name must have 1 to 255 bytes and no NUL"
        case .tooLarge: "an attribute value may hold at most 64 KiB"
        case .noSpace: "a file's attributes may hold at most 256 KiB and 1,024 names"
        case .noAttribute: "no such attribute"
        case .exists: "the attribute exists"
        case .damaged(let why): "damaged extended attributes: \(why)"
        }
    }
}

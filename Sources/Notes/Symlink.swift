import Foundation
import RecordStore

/// A symbolic link in a folder: a name and the path it points to (never resolved by the store).
public struct Symlink: RecordWrapper, Hashable {
    public static let recordType = "Symlink"
    public private(set) var record: Record

    public var name: String {
        get { (try? record.string("name")) ?? "" }
        set { record["name"] = .string(newValue) }
    }

    /// The target's bytes: kept as a string when they are UTF-8, as bytes otherwise.
    public var target: [UInt8] {
        get {
            switch record["target"] {
            case .string(let s): Array(s.utf8)
            case .bytes(let data): Array(data)
            default: []
            }
        }
        set { record["target"] = String(validating: newValue, as: UTF8.self).map(FieldValue.string) ?? .bytes(Data(newValue)) }
    }

    public var folder: RecordID? {
        get { try? record.reference("folder") }
        set { record.setReference("folder", to: newValue) }
    }

    public var ownership: Ownership? {
        get { Ownership(record) }
        set { newValue?.write(into: &record) }
    }

    public mutating func setModificationDate(_ date: Date) { record.modificationDate = date }

    public init(name: String, target: [UInt8], folder: RecordID? = nil, recordID: RecordID = RecordID()) {
        record = Record(recordType: Self.recordType, recordID: recordID)
        self.name = name
        self.target = target
        self.folder = folder
    }

    public init(record: Record) throws(NotesError) {
        try Self.check(record)
        _ = try record.string("name")
        _ = try record.reference("folder")
        switch record["target"] {
        case .string, .bytes: break
        default: throw .invalidField(record.recordID, key: "target")
        }
        self.record = record
    }
}

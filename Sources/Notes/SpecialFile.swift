import Foundation
import RecordStore

/// A FIFO, socket, character or block device in a folder: a name, its type and device number.
/// Only the node is kept; what flows through it is the kernel's business.
public struct SpecialFile: RecordWrapper, Hashable {
    public static let recordType = "SpecialFile"
    public private(set) var record: Record

    /// The node types a `SpecialFile` record holds (field `fileType`).
    public enum FileType: String, Sendable, CaseIterable {
        case fifo, socket, character, block
    }

    public var name: String {
        get { (try? record.string("name")) ?? "" }
        set { record["name"] = .string(newValue) }
    }

    /// Nil when the field holds something unknown (``init(record:)`` refuses such records).
    public var fileType: FileType? {
        get { record["fileType"]?.stringValue.flatMap(FileType.init(rawValue:)) }
        set { record["fileType"] = newValue.map { .string($0.rawValue) } }
    }

    /// The device number of a character or block device (`st_rdev`); 0 for the others.
    public var rdev: UInt64 {
        get { record["rdev"]?.int64Value.map { UInt64(bitPattern: $0) } ?? 0 }
        set { record["rdev"] = .int64(Int64(bitPattern: newValue)) }
    }

    /// The device's major and minor numbers (glibc's encoding of `dev_t`).
    public var major: UInt64 { ((rdev >> 8) & 0xfff) | ((rdev >> 32) & ~0xfff) }
    public var minor: UInt64 { (rdev & 0xff) | ((rdev >> 12) & ~0xff) }

    public var folder: RecordID? {
        get { try? record.reference("folder") }
        set { record.setReference("folder", to: newValue) }
    }

    public var ownership: Ownership? {
        get { Ownership(record) }
        set { newValue?.write(into: &record) }
    }

    public mutating func setModificationDate(_ date: Date) { record.modificationDate = date }

    public init(name: String, fileType: FileType, rdev: UInt64 = 0, folder: RecordID? = nil, recordID: RecordID = RecordID()) {
        record = Record(recordType: Self.recordType, recordID: recordID)
        self.name = name
        self.fileType = fileType
        self.rdev = rdev
        self.folder = folder
    }

    public init(record: Record) throws(NotesError) {
        try Self.check(record)
        _ = try record.string("name")
        _ = try record.reference("folder")
        guard record["fileType"]?.stringValue.flatMap(FileType.init(rawValue:)) != nil else {
            throw .invalidField(record.recordID, key: "fileType")
        }
        if let value = record["rdev"], value.int64Value == nil { throw .invalidField(record.recordID, key: "rdev") }
        self.record = record
    }
}

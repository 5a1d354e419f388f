import Foundation
import RecordStore

/// Any other file in a folder (an image, a PDF): a name and its content as an asset.
public struct Attachment: RecordWrapper, Hashable {
    public static let recordType = "Attachment"
    public private(set) var record: Record

    public var name: String {
        get { (try? record.string("name")) ?? "" }
        set { record["name"] = .string(newValue) }
    }

    /// The content, stored beside the records by hash (``RecordDatabase/makeAsset(_:)``).
    public var content: Asset? {
        get { record["content"]?.assetValue }
        set { record["content"] = newValue.map(FieldValue.asset) }
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

    public init(name: String, content: Asset?, folder: RecordID? = nil, recordID: RecordID = RecordID()) {
        record = Record(recordType: Self.recordType, recordID: recordID)
        self.name = name
        self.content = content
        self.folder = folder
    }

    public init(record: Record) throws(NotesError) {
        try Self.check(record)
        _ = try record.string("name")
        _ = try record.reference("folder")
        if let value = record["content"], value.assetValue == nil { throw .invalidField(record.recordID, key: "content") }
        self.record = record
    }
}

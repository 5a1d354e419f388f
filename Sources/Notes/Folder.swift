import RecordStore

/// A folder of notes (a directory in the mount); `parent` nests it in another folder.
public struct Folder: RecordWrapper, Hashable {
    public static let recordType = "Folder"
    public private(set) var record: Record

    public var name: String {
        get { (try? record.string("name")) ?? "" }
        set { record["name"] = .string(newValue) }
    }

    /// The containing folder; nil at the root. Deleting the parent deletes this folder.
    public var parent: RecordID? {
        get { try? record.reference("parent") }
        set { record.setReference("parent", to: newValue) }
    }

    public var ownership: Ownership? {
        get { Ownership(record) }
        set { newValue?.write(into: &record) }
    }

    public init(name: String, parent: RecordID? = nil, recordID: RecordID = RecordID()) {
        record = Record(recordType: Self.recordType, recordID: recordID)
        self.name = name
        self.parent = parent
    }

    public init(record: Record) throws(NotesError) {
        try Self.check(record)
        _ = try record.string("name")
        _ = try record.reference("parent")
        self.record = record
    }
}

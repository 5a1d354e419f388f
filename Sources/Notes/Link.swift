import Foundation
import RecordStore

/// A further name of a note, attachment, symlink or special file (a hard link): the mount shows
/// the `target` record under this name too, with the same inode and bytes. Deleting the target
/// deletes its links (the reference's action is `deleteSelf`).
public struct Link: RecordWrapper, Hashable {
    public static let recordType = "Link"
    /// The record types a hard link may name.
    public static let targetTypes: Set<String> = [Note.recordType, Attachment.recordType, Symlink.recordType, SpecialFile.recordType]
    public private(set) var record: Record

    public var name: String {
        get { (try? record.string("name")) ?? "" }
        set { record["name"] = .string(newValue) }
    }

    public var folder: RecordID? {
        get { try? record.reference("folder") }
        set { record.setReference("folder", to: newValue) }
    }

    /// The record this name leads to.
    public var target: RecordID? {
        get { try? record.reference("target") }
        set { record.setReference("target", to: newValue) }
    }

    public init(name: String, target: RecordID, folder: RecordID? = nil, recordID: RecordID = RecordID()) {
        record = Record(recordType: Self.recordType, recordID: recordID)
        self.name = name
        self.target = target
        self.folder = folder
    }

    public init(record: Record) throws(NotesError) {
        try Self.check(record)
        _ = try record.string("name")
        _ = try record.reference("folder")
        guard try record.reference("target") != nil else { throw .invalidField(record.recordID, key: "target") }
        self.record = record
    }
}

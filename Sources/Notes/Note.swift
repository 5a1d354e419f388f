import Foundation
import RecordStore

/// A note: a title, markdown text and the folder it sits in (a `Title.md` file in the mount).
public struct Note: RecordWrapper, Hashable {
    public static let recordType = "Note"
    public private(set) var record: Record

    public var title: String {
        get { (try? record.string("title")) ?? "" }
        set { record["title"] = .string(newValue) }
    }

    public var text: String {
        get { (try? record.string("text")) ?? "" }
        set { record["text"] = .string(newValue) }
    }

    /// The folder; nil for a note at the root. Deleting the folder deletes the note.
    public var folder: RecordID? {
        get { try? record.reference("folder") }
        set { record.setReference("folder", to: newValue) }
    }

    public var ownership: Ownership? {
        get { Ownership(record) }
        set { newValue?.write(into: &record) }
    }

    /// Sets the modification date explicitly (as `touch` and `import` do) instead of "now at save".
    public mutating func setModificationDate(_ date: Date) { record.modificationDate = date }

    public init(title: String, text: String = "", folder: RecordID? = nil, recordID: RecordID = RecordID()) {
        record = Record(recordType: Self.recordType, recordID: recordID)
        self.title = title
        self.text = text
        self.folder = folder
    }

    public init(record: Record) throws(NotesError) {
        try Self.check(record)
        for key in ["title", "text"] { _ = try record.string(key) }
        _ = try record.reference("folder")
        self.record = record
    }
}

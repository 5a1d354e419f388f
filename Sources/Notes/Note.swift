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

    /// The properties of the note's front matter, in the order written; none when it has none.
    /// A front matter that cannot be read in full gives the properties it could read.
    public var properties: [Property] { FrontMatter.parse(text)?.properties ?? [] }

    /// The largest text kept inline as the `text` field (what queries and search see): 8 MiB.
    /// Bigger files, and bytes that are not UTF-8, are kept losslessly in ``content`` instead.
    public static let maxInlineTextBytes = 8 << 20

    /// The note's bytes as an asset when they are not UTF-8 or larger than ``maxInlineTextBytes``
    /// (then `text` is absent and reads as ""); nil for an ordinary text note.
    public var content: Asset? {
        get { record["content"]?.assetValue }
        set { record["content"] = newValue.map(FieldValue.asset) }
    }

    /// The string to keep as `text` for a note whose bytes are `bytes`: nil when they are not valid
    /// UTF-8 or larger than ``maxInlineTextBytes`` (then they belong in ``content``).
    public static func inlineText(_ bytes: [UInt8]) -> String? {
        guard bytes.count <= maxInlineTextBytes else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Whether the note's bytes are kept in ``content`` rather than as `text`.
    public var hasContentAsset: Bool { content != nil }

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
        _ = try record.string("title")
        if let value = record["content"] {
            guard value.assetValue != nil else { throw .invalidField(record.recordID, key: "content") }
        } else {
            _ = try record.string("text")
        }
        _ = try record.reference("folder")
        self.record = record
    }
}

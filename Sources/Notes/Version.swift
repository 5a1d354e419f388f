import Foundation
import RecordStore

/// One earlier state of a note or an attachment, kept when a save or a delete replaced it
/// (``VersionPolicy``). Its own record, so it survives the note's delete and syncs like any other.
///
/// It names its note by record name in a plain string field, not a reference: the store refuses a
/// reference to a missing record and `fsck` reports one as damage, and a version must outlive its
/// note (`note undelete`).
public struct Version: RecordWrapper, Hashable {
    public static let recordType = "Version"
    public private(set) var record: Record

    /// What replaced the state a version keeps.
    public enum Kind: String, Sendable, CaseIterable {
        /// A save (coalesced: see ``VersionPolicy``); also the CLI's `note edit`.
        case edit
        /// The note was deleted (itself, or with its folder).
        case delete
        /// A sync merged another machine's edit into it.
        case merge
        /// A sync met an edit it could not merge (the other side's text went to a conflict copy).
        case conflict
        /// `note restore` (or `undelete`) put an older version back.
        case restore
        /// Another file was renamed over it (`mv a.md b.md`).
        case rename
    }

    /// The record name of the note (or attachment) this is a version of.
    public var noteName: String { (try? record.string("note")) ?? "" }
    /// `Note` or `Attachment`.
    public var noteType: String { (try? record.string("noteType")) ?? Note.recordType }
    /// The note's title (an attachment's name) in this version.
    public var title: String { (try? record.string("title")) ?? "" }
    /// The record name of the folder the note was in (nil: the root).
    public var folderName: String? { try? record.string("folderRecord") }
    /// The names of the folders the note was in, from the top (field `folderNames`), for a
    /// version a delete made: where an undelete puts the note back when its folder is gone too.
    /// Nil when not recorded (a version of another kind, or from an older notesfs).
    public var folderNames: [String]? {
        record["folderNames"]?.listValue.map { $0.compactMap(\.stringValue) }
    }
    /// The replaced state's modification date: when this version was written.
    public var date: Date { record["date"]?.dateValue ?? record.creationDate ?? Date(timeIntervalSince1970: 0) }
    /// What replaced it (nil: a kind this version of notesfs does not know).
    public var kind: Kind? { (try? record.string("kind")).flatMap(Kind.init(rawValue:)) }
    public var kindName: String { (try? record.string("kind")) ?? "" }
    /// The byte size of its content.
    public var size: Int64 { record["size"]?.int64Value ?? 0 }
    /// The text, for a version of a text note (read the version with `VersionHistory.fullVersion`:
    /// the index leaves out long texts, and a version kept as a delta holds none of its own).
    public var text: String? { try? record.string("text") }
    /// Whether it is kept as a delta of a newer version (``VersionDelta``).
    public var isDelta: Bool { record["text"] == nil && record.omittedSizes["text"] == nil && record["deltaBase"] != nil }
    /// The content asset (bytes kept by hash: an attachment, or a note that is not UTF-8 text).
    public var content: Asset? { record["content"]?.assetValue }

    /// The note's permission bits (`mode`, as the note's record holds them) in this version; nil
    /// when the note had none (made outside a mount) or the field is of another type.
    public var mode: Int64? { record["mode"]?.int64Value }
    /// The note's owner (`uid`) in this version; nil when it had none.
    public var uid: Int64? { record["uid"]?.int64Value }
    /// The note's group (`gid`) in this version; nil when it had none.
    public var gid: Int64? { record["gid"]?.int64Value }
    /// The note's creation date (field `created`): an undelete gives it back; nil for a version
    /// written without one.
    public var noteCreationDate: Date? { record["created"]?.dateValue }

    /// The fields of a note's record, beside its bytes, title and folder, that a version keeps
    /// and an undelete puts back: its ownership and mode (``Ownership``; numbers), and its
    /// extended attributes (``ExtendedAttributes``, field `xattrs`).
    public static let keptMetadataKeys = ["mode", "uid", "gid"]

    /// A short ID for the command line: the first 8 characters of the record name.
    public var shortID: String { String(record.recordID.recordName.prefix(8)) }

    /// A version of `replaced` (the whole stored record of a note or attachment), made by `kind`.
    public init(of replaced: Record, kind: Kind, recordID: RecordID = RecordID(recordName: UUID.random().uuidString.lowercased())) {
        var record = Record(recordType: Self.recordType, recordID: recordID)
        record["note"] = .string(replaced.recordID.recordName)
        record["noteType"] = .string(replaced.recordType)
        let titleKey = replaced.recordType == Note.recordType ? "title" : "name"
        record["title"] = .string(replaced[titleKey]?.stringValue ?? "")
        if let folder = replaced["folder"]?.referenceValue?.recordID.recordName { record["folderRecord"] = .string(folder) }
        var size: Int64 = 0
        if let asset = replaced["content"]?.assetValue {
            record["content"] = .asset(asset)
            size = asset.size
        } else {
            let text = replaced["text"]?.stringValue ?? ""
            record["text"] = .string(text)
            size = Int64(text.utf8.count)
        }
        record["date"] = .date(replaced.modificationDate ?? Date(timeIntervalSince1970: 0))
        if let created = replaced.creationDate { record["created"] = .date(created) }
        for key in Self.keptMetadataKeys {
            if let value = replaced[key]?.int64Value { record[key] = .int64(value) }
        }
        if let xattrs = replaced[ExtendedAttributes.fieldKey] { record[ExtendedAttributes.fieldKey] = xattrs }
        record["kind"] = .string(kind.rawValue)
        record["size"] = .int64(size)
        self.record = record
    }

    public init(record: Record) throws(NotesError) {
        try Self.check(record)
        guard let note = try record.string("note"), !note.isEmpty else { throw .invalidField(record.recordID, key: "note") }
        _ = try record.string("noteType")
        _ = try record.string("title")
        _ = try record.string("folderRecord")
        _ = try record.string("kind")
        guard record["date"]?.dateValue != nil else { throw .invalidField(record.recordID, key: "date") }
        if let size = record["size"], size.int64Value == nil { throw .invalidField(record.recordID, key: "size") }
        for key in Self.keptMetadataKeys where record[key] != nil && record[key]?.int64Value == nil {
            throw .invalidField(record.recordID, key: key)
        }
        if let created = record["created"], created.dateValue == nil { throw .invalidField(record.recordID, key: "created") }
        if let names = record["folderNames"], names.listValue?.allSatisfy({ $0.stringValue != nil }) != true {
            throw .invalidField(record.recordID, key: "folderNames")
        }
        if let value = record["content"] {
            guard value.assetValue != nil else { throw .invalidField(record.recordID, key: "content") }
        } else if record["text"] == nil, record.omittedSizes["text"] == nil {
            // Kept as a delta of another version (``VersionDelta``; read whole by `fullVersion`).
            guard record["deltaBase"]?.stringValue != nil else { throw .invalidField(record.recordID, key: "text") }
        } else {
            _ = try record.string("text")
        }
        self.record = record
    }
}

import Foundation
import RecordStore

/// One entry of a folder as the mount shows it: a folder, a note, an attachment or another
/// file, with its file name and path (see ``FolderContents``).
public struct FolderEntry: Sendable {
    public var kind: EntryNames.Kind
    /// The record; nil for the virtual `Recovered` folder (``FolderContents/recoveredID``).
    public var metadata: RecordMetadata?
    /// The stored name (folder `name`, note `title`, attachment `name`).
    public var name: String
    /// The name shown in the folder (``EntryNames``).
    public var fileName: String
    /// The containing folder (``FolderContents/recoveredID`` inside `Recovered`); nil at the root.
    public var parent: RecordID?
    /// The path from the root, without a trailing `/`.
    public var path: String

    public init(kind: EntryNames.Kind, metadata: RecordMetadata?, name: String, fileName: String, parent: RecordID?, path: String) {
        self.kind = kind
        self.metadata = metadata
        self.name = name
        self.fileName = fileName
        self.parent = parent
        self.path = path
    }

    public var recordID: RecordID { metadata?.recordID ?? FolderContents.recoveredID }
    public var modificationDate: Date? { metadata?.record.modificationDate }
    /// Whether this is the virtual `Recovered` folder (no record: nothing is saved in it or removes it).
    public var isVirtual: Bool { metadata == nil }
    /// Bytes of the note (text or content asset), attachment content or symlink target; nil for a
    /// folder or a hard link (see ``size(of:)``).
    public var size: Int? {
        switch kind {
        case .folder, .link: nil
        case .note, .attachment, .symlink, .special: metadata.flatMap(Self.size(of:))
        }
    }
    /// A symlink's target (empty for other entries).
    public var symlinkTarget: [UInt8] { metadata.flatMap { try? Symlink(record: $0.record) }?.target ?? [] }
    /// Whether this is a note kept as bytes (its `content` asset: not UTF-8 text, or over 8 MiB).
    public var isBinaryNote: Bool { kind == .note && metadata?.record[FieldName.content]?.assetValue != nil }
    /// The path as listed: folders end in `/`.
    public var displayPath: String { kind == .folder ? path + "/" : path }

    /// The size of a note's, attachment's or symlink's bytes (0 for a special file; what a hard
    /// link to it shows); nil for a folder, a hard link or a type no folder shows.
    public static func size(of metadata: RecordMetadata) -> Int? {
        switch EntryNames.kind(ofRecordType: metadata.recordType) {
        case .note?:
            (metadata.record[FieldName.content]?.assetValue.map { Int(clamping: $0.size) } ?? metadata.byteCount(of: FieldName.text)) ?? 0
        case .attachment?: metadata.record[FieldName.content]?.assetValue.map { Int(clamping: $0.size) } ?? 0
        case .symlink?: (try? Symlink(record: metadata.record))?.target.count ?? 0
        case .special?: 0
        case .folder?, .link?, nil: nil
        }
    }
}

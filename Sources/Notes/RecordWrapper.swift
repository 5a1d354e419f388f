import Foundation
import RecordStore

/// A typed view of a record: `Folder`, `Note`, `Attachment`.
public protocol RecordWrapper: Sendable {
    /// The record type this wrapper reads and writes.
    static var recordType: String { get }
    /// The record, with the wrapper's fields written into it.
    var record: Record { get }
    /// Wraps a fetched record.
    ///
    /// - Throws: ``NotesError/wrongRecordType(expected:found:)`` or ``NotesError/invalidField(_:key:)``.
    init(record: Record) throws(NotesError)
}

extension RecordWrapper {
    public var recordID: RecordID { record.recordID }
    public var creationDate: Date? { record.creationDate }
    public var modificationDate: Date? { record.modificationDate }
    /// A number stable for the record's whole life (the mount's inode number).
    public var identity: UInt64? { record.identity }

    static func check(_ record: Record) throws(NotesError) {
        guard record.recordType == recordType else {
            throw .wrongRecordType(expected: recordType, found: record.recordType)
        }
    }
}

/// Errors of the notes layer.
public enum NotesError: Error, Sendable, Equatable, CustomStringConvertible {
    case wrongRecordType(expected: String, found: String)
    case invalidField(RecordID, key: String)
    /// A store error (conflict, missing record, I/O, …).
    case store(RecordStoreError)
    /// A search query that cannot be parsed, or a search that could not be run (the reason).
    case search(String)
    /// A search query the rules of `notesfs search` refuse (empty, no words, too long, unbalanced).
    case refusedQuery(String)
    /// A version kept as a delta whose text cannot be made (its chain of bases is broken).
    case damagedVersion(RecordID, reason: String)
    /// A path that names no folder, note or attachment (what is missing).
    case notFound(String)

    public var description: String {
        switch self {
        case .wrongRecordType(let expected, let found): "expected a \(expected) record, found a \(found)"
        case .invalidField(let id, let key): "record \(id): field \(key) has the wrong type"
        case .store(let error): error.description
        case .search(let reason): "search: \(reason)"
        case .refusedQuery(let reason): "search: \(reason)"
        case .damagedVersion(let id, let reason): "version \(id.recordName): damaged delta: \(reason)"
        case .notFound(let what): what
        }
    }
}

/// POSIX ownership and mode kept in a record (fields `mode`, `uid`, `gid`), set by the mount.
public struct Ownership: Sendable, Hashable {
    public var mode: UInt32
    public var uid: UInt32
    public var gid: UInt32

    public init(mode: UInt32, uid: UInt32, gid: UInt32) {
        self.mode = mode
        self.uid = uid
        self.gid = gid
    }

    /// The ownership `record` keeps (a note, a folder, or a version of a note); nil when it keeps none.
    public init?(_ record: Record) {
        guard let mode = record["mode"]?.int64Value, let uid = record["uid"]?.int64Value, let gid = record["gid"]?.int64Value else {
            return nil
        }
        self.init(mode: UInt32(truncatingIfNeeded: mode), uid: UInt32(truncatingIfNeeded: uid), gid: UInt32(truncatingIfNeeded: gid))
    }

    func write(into record: inout Record) {
        record["mode"] = .int64(Int64(mode))
        record["uid"] = .int64(Int64(uid))
        record["gid"] = .int64(Int64(gid))
    }
}

extension Record {
    func string(_ key: String) throws(NotesError) -> String? {
        guard let value = self[key] else { return nil }
        guard let s = value.stringValue else { throw .invalidField(recordID, key: key) }
        return s
    }

    func reference(_ key: String) throws(NotesError) -> RecordID? {
        guard let value = self[key] else { return nil }
        guard let r = value.referenceValue else { throw .invalidField(recordID, key: key) }
        return r.recordID
    }

    /// Sets a containment reference (`folder`, `parent`): deleting the referenced folder deletes
    /// this record (`deleteSelf`); nil means the root.
    public mutating func setReference(_ key: String, to id: RecordID?) {
        self[key] = id.map { .reference(Reference(recordID: $0, action: .deleteSelf)) }
    }
}

/// The notes layer's own check of a record of one of its types, beyond the store's: each field the
/// wrapper reads has the type it expects (a `folder` that is a reference, a `title` that is a
/// string, a `fileType` the mount knows). Records of other types are the store's alone.
public enum NotesRecords {
    /// Every wrapper, by the record type it reads.
    public static let wrappers: [any RecordWrapper.Type] = [
        Folder.self, Note.self, Attachment.self, Symlink.self, SpecialFile.self, Link.self, Version.self,
    ]

    /// Why the notes layer could not read `record`; nil when it can, or when its type is none of ours.
    public static func validityProblem(of record: Record) -> String? {
        guard let wrapper = wrappers.first(where: { $0.recordType == record.recordType }) else { return nil }
        do { _ = try wrapper.init(record: record) } catch { return error.description }
        return ExtendedAttributes.validityProblem(of: record)
    }
}

import Foundation

/// The name of a record, unique in its database, as `CKRecord.ID`.
public struct RecordID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var recordName: String

    public init(recordName: String) { self.recordName = recordName }

    /// A new random record name (a UUID).
    public init() { self.recordName = UUID.random().uuidString }

    public var description: String { recordName }

    public static func < (a: RecordID, b: RecordID) -> Bool { a.recordName < b.recordName }
}

extension FieldValue {
    /// Whether a date is in this value (itself or in its list).
    var hasDate: Bool {
        switch self {
        case .date: true
        case .list(let items): items.contains { $0.hasDate }
        default: false
        }
    }
}

/// A record: a type, typed fields and the system fields the store maintains, as `CKRecord`.
///
/// A value type: a `Record` you hold is a copy; save it with ``RecordDatabase/modify(saving:deleting:savePolicy:)``.
public struct Record: Sendable, Hashable {
    public let recordID: RecordID
    public let recordType: String
    /// Changes on every save; `nil` for a record never saved.
    public internal(set) var recordChangeTag: String?
    public internal(set) var creationDate: Date?
    /// Set by the store on every save, unless the client set it explicitly (as `touch` does).
    public var modificationDate: Date? {
        get { storedModificationDate }
        set {
            storedModificationDate = newValue
            modificationDateWasSet = true
        }
    }
    /// A stable number for the record's whole life, never 0 or 1 (usable as an inode number).
    public internal(set) var identity: UInt64?

    public internal(set) var fields: [String: FieldValue]
    /// Keys set since the record was fetched or created (used by the `changedKeys` save policy).
    public internal(set) var changedKeys: Set<String> = []
    /// Large fields left out of this copy, with their byte sizes: empty for a full record; set on
    /// the copies the in-memory index holds (``RecordMetadata/record``). A save of a partial
    /// record keeps these fields as stored, so it can never drop them, and when every field it
    /// carries is small it is a metadata-only save: its journal line holds no large value and no
    /// record file is rewritten for it (see ``RecordDatabase/modify(saving:deleting:savePolicy:)``).
    /// Setting a field removes it from here.
    public internal(set) var omittedSizes: [String: Int] {
        get { omitted.dictionary }
        set { omitted = OmittedFields(newValue) }
    }
    /// What ``omittedSizes`` reads: held without an allocation for the usual single field.
    var omitted = OmittedFields()

    var storedModificationDate: Date?
    /// Set by ``takeIdentity(_:)`` for the next save only (not stored).
    var takenIdentity: UInt64?
    var modificationDateWasSet = false
    /// Set by ``setCreationDate(_:)`` for the first save only (not stored).
    var creationDateWasSet = false

    public init(recordType: String, recordID: RecordID = RecordID()) {
        self.recordType = recordType
        self.recordID = recordID
        self.fields = [:]
    }

    init(
        recordID: RecordID, recordType: String, changeTag: String?, creationDate: Date?,
        modificationDate: Date?, identity: UInt64?, fields: [String: FieldValue]
    ) {
        self.recordID = recordID
        self.recordType = recordType
        self.recordChangeTag = changeTag
        self.creationDate = creationDate
        self.storedModificationDate = modificationDate
        self.identity = identity
        self.fields = fields
    }

    /// Gives a record new to this database the creation date it has elsewhere (a replica of a
    /// record made on another machine, as a sync brings one): its first save keeps `date`
    /// instead of the time of that save. A saved record's creation date never changes, so the
    /// call does nothing for one.
    public mutating func setCreationDate(_ date: Date) {
        guard recordChangeTag == nil else { return }
        creationDate = date
        creationDateWasSet = true
    }

    /// Gives a new record an identity from ``RecordDatabase/reserveIdentity()`` (so that it is
    /// known before the first save, as a filesystem needs an inode number at create). A record
    /// already saved keeps its identity: the call does nothing then.
    public mutating func useReservedIdentity(_ identity: UInt64) {
        guard recordChangeTag == nil else { return }
        self.identity = identity
    }

    /// Makes this record take over `identity` from a record deleted in the same modify (a
    /// filesystem's rename over an existing file: the saved record keeps its `recordName` and
    /// `creationDate`, and shows the moved file's inode number from then on, across reopens).
    /// The modify throws `invalidArguments` unless a record it deletes has that identity.
    public mutating func takeIdentity(_ identity: UInt64) {
        takenIdentity = identity
    }

    /// Reads or writes a field; writing `nil` removes it.
    public subscript(key: String) -> FieldValue? {
        get { fields[key] }
        set {
            fields[key] = newValue
            changedKeys.insert(key)
            omitted[key] = nil
        }
    }

    /// Whether large fields are left out of this copy (see ``omittedSizes``).
    public var isPartial: Bool { !omitted.isEmpty }

    /// Whether a save of this record writes its record file with the commit: a full record with a
    /// large field. Any other save (a partial record, a record of small fields only) is held whole
    /// by its journal line and the in-memory index, and its file is written later, in the
    /// background or at the next checkpoint (``RecordIndex/staleRecordFiles``).
    var savesRecordFile: Bool { !isPartial && fields.values.contains { !RecordMetadata.isSmall($0) } }

    public var allKeys: [String] { fields.keys.sorted() }

    /// Calls `body` with every reference the record holds and its key, in no particular order and
    /// allocating nothing (the index does this for every record it loads or saves).
    func forEachReference(_ body: (_ key: String, _ reference: Reference) -> Void) {
        for (key, value) in fields { value.forEachReference { body(key, $0) } }
    }

    /// Every reference the record holds, with the key that holds it.
    var references: [(key: String, reference: Reference)] {
        fields.sorted { $0.key < $1.key }.flatMap { key, value in value.references.map { (key, $0) } }
    }

    /// Sets every date to the value it reads back from JSON (seconds since 1970 as a `Double`,
    /// which can differ from a `Date`'s own value in the last bit): the index keeps saved records
    /// in memory, so a record must read the same from there, from its file and from another process.
    mutating func makeDatesStorable() {
        func storable(_ date: Date) -> Date { Date(timeIntervalSince1970: date.timeIntervalSince1970) }
        func storable(_ value: FieldValue) -> FieldValue {
            switch value {
            case .date(let date): .date(storable(date))
            case .list(let items) where items.contains(where: { $0.hasDate }): .list(items.map(storable))
            default: value
            }
        }
        creationDate = creationDate.map(storable)
        storedModificationDate = storedModificationDate.map(storable)
        for (key, value) in fields where value.hasDate { fields[key] = storable(value) }
    }

    /// A copy that looks freshly fetched: no pending changed keys.
    func clearingChanges() -> Record {
        var copy = self
        copy.changedKeys = []
        copy.modificationDateWasSet = false
        copy.creationDateWasSet = false
        copy.takenIdentity = nil
        return copy
    }
}

import Foundation

/// Why a modify is made, in its caller's words: the store keeps no meaning for it and hands it to
/// the commit hook (``CommitHook``) as it is. The notes layer names its own (an edit, a sync apply,
/// a merge, a restore).
public struct ModifyReason: Hashable, Sendable {
    /// The reason for the whole commit.
    public var name: String
    /// Reasons for single records of the commit, by record name, where they differ from ``name``
    /// (a sync page that merges one note and takes the server's version of the others).
    public var records: [String: String]

    public init(_ name: String, records: [String: String] = [:]) {
        self.name = name
        self.records = records
    }

    /// The reason for the record named `recordName`.
    public func reason(for recordName: String) -> String { records[recordName] ?? name }
}

/// A policy that adds records to a commit, in the same atomic step: the notes layer keeps the
/// version a save or a delete replaces this way (`VersionHistory`), so that no crash can leave a
/// save without its version, or half a version.
///
/// Installed on a database with ``RecordDatabase/setCommitHook(_:)``; called by every
/// ``RecordDatabase/modify(saving:deleting:savePolicy:asExternalChange:reason:)`` of that instance
/// (not by other processes' commits, which their own hooks see), with the commit lock held and
/// the index caught up, after change tags and references were checked and before anything is
/// written.
public protocol CommitHook: Sendable {
    /// New records to save in the same commit as `commit`'s changes (none: an empty list).
    ///
    /// Runs with the commit lock held: it must not call the database (it would deadlock); it reads
    /// what it needs through `commit`, which is valid during this call only (do not keep it).
    /// Each record returned must be new (no change tag, a name no record has) or the next version
    /// of a stored record this commit neither saves nor deletes (its stored change tag), and is
    /// stored like any other save (change tag, dates, identity, checks); or it replaces the fields
    /// of a record this commit saves (same type, whole, no references), which keeps that save's
    /// change tag, identity and dates.
    ///
    /// - Throws: any ``RecordStoreError``: the whole commit then fails, nothing is written.
    func records(toAddTo commit: PendingCommit) throws(RecordStoreError) -> [Record]
}

/// A commit about to be written, as a ``CommitHook`` sees it.
public struct PendingCommit {
    /// One record the commit saves.
    public struct Save {
        /// The record as it will be stored (new change tag and dates; partial when it is a
        /// metadata-only save, see ``Record/isPartial``).
        public let record: Record
        /// The record as stored before this commit (small fields; ``wholeRecord(_:)`` reads the
        /// rest); nil for a new record.
        public let previous: RecordMetadata?
        /// Whether the save takes over the identity of a record this commit deletes
        /// (``Record/takeIdentity(_:)``: a filesystem's rename over an existing file).
        public let takesIdentity: Bool
    }

    /// What the caller passed to `modify` (nil: none).
    public let reason: ModifyReason?
    public let saves: [Save]
    /// Every record the commit deletes (cascades included), as stored before it.
    public let deleted: [RecordMetadata]
    /// The identities saved records take over from deleted ones (see ``Save/takesIdentity``).
    public let takenIdentities: Set<UInt64>
    /// The time the store gives this commit's saves.
    public let date: Date
    /// Whether this is a delete tried again after it found no room: the hook should add only what
    /// the commit cannot go without (a delete must be able to free space on a full disk).
    public let isShortOfSpace: Bool
    let database: RecordDatabase
    let index: RecordIndex

    /// The whole stored record of `metadata` (its large fields read from its file).
    ///
    /// - Throws: ``RecordStoreError/damagedRecord(_:path:reason:)`` for a damaged file, I/O errors.
    public func wholeRecord(_ metadata: RecordMetadata) throws(RecordStoreError) -> Record {
        try database.fullRecord(metadata)
    }

    /// The metadata of the records of `recordType` whose string field `key` is `value`, as stored
    /// before this commit: from the field's index when ``RecordDatabase/indexField(_:ofType:)``
    /// declared one (no scan), else by a scan of the index.
    public func records(ofType recordType: String, whereField key: String, equals value: String) -> [RecordMetadata] {
        index.metadata(ofType: recordType, whereField: key, equals: value)
    }

    /// The stored metadata of the record named `name` before this commit; nil when there is none.
    public func metadata(named name: String) -> RecordMetadata? { index.entries[name] }
}

extension RecordDatabase {
    /// Installs the hook every modify of this instance calls (nil removes it); replaces any earlier one.
    public func setCommitHook(_ hook: (any CommitHook)?) {
        commitHook.withLock { $0 = hook }
    }

    /// The installed hook, if any.
    public var installedCommitHook: (any CommitHook)? { commitHook.withLock { $0 } }
}

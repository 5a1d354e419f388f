import Foundation
import RecordStore

/// The commit hook that keeps note history: every save of a note or an attachment that changes its
/// bytes, and every delete of one, keeps the state it replaces as a ``Version`` record in the same
/// atomic commit.
///
/// Which saves keep one:
/// - an edit (no reason, or ``ModifyReason/edit``) keeps the replaced state unless the note's newest
///   version was made by an edit and its date is less than ``HistorySettings/interval`` from the
///   replaced state's: a storm of saves keeps the state at least every interval;
/// - always: a delete (cascades included), a rename over the note (``PendingCommit/Save/takesIdentity``),
///   ``ModifyReason/editKeepingVersion`` (`note edit`), ``ModifyReason/restore``, and a sync's
///   `merge` and `conflict` records;
/// - never: a save that leaves the bytes as they were (a rename, `chmod`, `touch`), a new record,
///   an edit of an empty state (a file just created, or truncated by a shell's `>`: the first
///   real content is what the interval starts from),
///   versions themselves, and a sync applying another machine's change (``ModifyReason/sync``:
///   that machine kept its version, which syncs too).
public struct VersionPolicy: CommitHook {
    public let settings: HistorySettings
    /// The record types whose states are kept.
    public static let versionedTypes: Set<String> = [Note.recordType, Attachment.recordType]

    public init(settings: HistorySettings = .fromEnvironment()) { self.settings = settings }

    public func records(toAddTo commit: PendingCommit) throws(RecordStoreError) -> [Record] {
        // A delete on a full disk: no versions (they keep bytes), but no delta may lose its base.
        if commit.isShortOfSpace { return wholeDependents(in: commit) + wholeSavedDeltas(in: commit) }
        var versions: [Record] = []
        let reasonName = commit.reason?.name ?? ModifyReason.edit.name
        for save in commit.saves where Self.versionedTypes.contains(save.record.recordType) {
            guard let previous = save.previous, previous.recordType == save.record.recordType else { continue }
            let name = save.record.recordID.recordName
            let reason = commit.reason?.reason(for: name) ?? reasonName
            let kind: Version.Kind
            switch reason {
            case ModifyReason.sync.name, ModifyReason.prune.name: continue
            case ModifyReason.merge: kind = .merge
            case ModifyReason.conflict: kind = .conflict
            case ModifyReason.restore.name: kind = .restore
            default: kind = save.takesIdentity ? .rename : .edit
            }
            // A metadata-only save (rename, chmod, touch) carries no bytes: they did not change.
            if save.record.isPartial, save.record["text"] == nil, save.record["content"] == nil { continue }
            // An empty state (a file just created, or truncated by a shell's `>` before its
            // write) is no version worth keeping, and starts no interval.
            if kind == .edit, Self.isEmpty(previous) { continue }
            if kind == .edit, reason != ModifyReason.editKeepingVersion.name, coalesces(previous, in: commit) { continue }
            guard let replaced = whole(previous, in: commit) else { continue }
            if Self.sameBytes(replaced, save.record) { continue }
            versions.append(Version(of: replaced, kind: kind).record)
        }
        if reasonName != ModifyReason.sync.name, reasonName != ModifyReason.prune.name {
            for deleted in commit.deleted where Self.versionedTypes.contains(deleted.recordType) {
                // A rename over a file deletes the source: its bytes live on in the target.
                if commit.takenIdentities.contains(deleted.identity) { continue }
                if let replaced = whole(deleted, in: commit) {
                    var version = Version(of: replaced, kind: .delete).record
                    if let names = Self.folderNames(of: deleted, in: commit) {
                        version["folderNames"] = .list(names.map(FieldValue.string))
                    }
                    versions.append(version)
                }
            }
        }
        return versions + wholeDependents(in: commit) + wholeSavedDeltas(in: commit)
    }

    /// The versions this commit saves as deltas whose base it deletes or that is not here (a
    /// compaction racing a prune, a sync page from a machine that compacted what this one pruned),
    /// with their whole text instead: made from the base as it was before this commit, else from
    /// this machine's own copy of the version (a version's bytes never change). One that can be
    /// made neither way is saved as it came (and fsck reports it).
    func wholeSavedDeltas(in commit: PendingCommit) -> [Record] {
        let deleted = Set(commit.deleted.map(\.recordID.recordName))
        let saved = Set(commit.saves.map(\.record.recordID.recordName))
        var whole: [Record] = []
        for save in commit.saves where save.record.recordType == Version.recordType && !save.record.isPartial {
            guard let delta = try? VersionDelta(record: save.record) else { continue }
            guard deleted.contains(delta.base) || (commit.metadata(named: delta.base) == nil && !saved.contains(delta.base)) else {
                continue
            }
            let read = { (name: String) throws(NotesError) -> Record in
                guard let metadata = commit.metadata(named: name) else { throw .store(.unknownItem(RecordID(recordName: name))) }
                do throws(RecordStoreError) { return try commit.wholeRecord(metadata) } catch { throw .store(error) }
            }
            if let made = try? VersionHistory.materialized(save.record, read: read) {
                whole.append(made)
            } else if let previous = save.previous, let own = try? commit.wholeRecord(previous),
                let made = try? VersionHistory.materialized(own, read: read), let text = made["text"]?.stringValue
            {
                whole.append(VersionDelta.whole(save.record, text: text))
            } else {
                FileHandle.standardError.write(
                    Data("notesfs: version \(save.record.recordID.recordName) is saved as a delta of \(delta.base), which is gone\n".utf8))
            }
        }
        return whole
    }

    /// The versions kept as deltas (``VersionDelta``) of a version this commit deletes (a prune,
    /// here or on another machine through a sync), with their whole text back: no delta loses its
    /// base. One that cannot be made whole (a chain already broken) is logged and left.
    func wholeDependents(in commit: PendingCommit) -> [Record] {
        let deletedVersions = commit.deleted.filter { $0.recordType == Version.recordType }
        guard !deletedVersions.isEmpty else { return [] }
        let untouchable = Set(commit.deleted.map(\.recordID.recordName) + commit.saves.map(\.record.recordID.recordName))
        var rewritten: [Record] = []
        for base in deletedVersions {
            for dependent in commit.records(ofType: Version.recordType, whereField: "deltaBase", equals: base.recordID.recordName)
            where !untouchable.contains(dependent.recordID.recordName) {
                do throws(NotesError) {
                    let record: Record
                    do throws(RecordStoreError) { record = try commit.wholeRecord(dependent) } catch { throw .store(error) }
                    rewritten.append(
                        try VersionHistory.materialized(record) { (name) throws(NotesError) -> Record in
                            guard let metadata = commit.metadata(named: name) else {
                                throw .store(.unknownItem(RecordID(recordName: name)))
                            }
                            do throws(RecordStoreError) { return try commit.wholeRecord(metadata) } catch { throw .store(error) }
                        })
                } catch {
                    FileHandle.standardError.write(
                        Data(
                            "notesfs: version \(dependent.recordID.recordName) keeps a delta of a deleted version and cannot be made whole: \(error)\n"
                                .utf8))
                }
            }
        }
        return rewritten
    }

    /// Whether an edit of the note whose stored state is `previous` keeps no version: its newest
    /// version was made by an edit within ``HistorySettings/interval`` of `previous`'s date.
    func coalesces(_ previous: RecordMetadata, in commit: PendingCommit) -> Bool {
        guard settings.interval > 0 else { return false }
        let versions = commit.records(ofType: Version.recordType, whereField: "note", equals: previous.recordID.recordName)
            .filter { !Self.isEmpty($0) }
        guard let newest = versions.max(by: { VersionHistory.date(of: $0) < VersionHistory.date(of: $1) }) else { return false }
        guard newest.field("kind")?.stringValue == Version.Kind.edit.rawValue else { return false }
        let replacedDate = previous.modificationDate ?? commit.date
        return abs(replacedDate.timeIntervalSince(VersionHistory.date(of: newest))) < settings.interval
    }

    /// The whole stored record; nil (logged) when its file cannot be read: a damaged file must not
    /// stop the save that replaces it.
    private func whole(_ metadata: RecordMetadata, in commit: PendingCommit) -> Record? {
        do { return try commit.wholeRecord(metadata) } catch {
            FileHandle.standardError.write(Data("notesfs: no version kept of \(metadata.recordID): \(error)\n".utf8))
            return nil
        }
    }

    /// The names of the folders `record` is in, from the top, as stored before this commit (a
    /// folder deleted with it included); nil when the chain is broken or goes round.
    static func folderNames(of record: RecordMetadata, in commit: PendingCommit) -> [String]? {
        var names: [String] = []
        var next = record.field("folder")?.referenceValue?.recordID.recordName
        while let name = next {
            guard names.count < 256, let folder = commit.metadata(named: name), folder.recordType == Folder.recordType,
                let folderName = folder.field("name")?.stringValue
            else { return nil }
            names.append(folderName)
            next = folder.field("parent")?.referenceValue?.recordID.recordName
        }
        return names.reversed()
    }

    /// Whether a note, attachment or version (by its metadata) holds no bytes: no content asset,
    /// and an empty text (or none, and not a delta).
    static func isEmpty(_ metadata: RecordMetadata) -> Bool {
        guard metadata.field("content") == nil, metadata.field("deltaBase") == nil else { return false }
        if let size = metadata.sizes["text"] { return size == 0 }
        return metadata.field("text")?.stringValue?.isEmpty ?? true
    }

    /// Whether `new` (a full record, or a partial one carrying some content field) holds the same
    /// bytes as `old`.
    static func sameBytes(_ old: Record, _ new: Record) -> Bool {
        for key in ["text", "content"] where new.omittedSizes[key] == nil {
            if old[key] != new[key] { return false }
        }
        return true
    }
}

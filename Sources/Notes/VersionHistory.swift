import Foundation
import RecordStore

/// Reading and restoring note history (the records ``VersionPolicy`` keeps): what the CLI and a
/// mount's history view call.
public enum VersionHistory {
    /// Installs ``VersionPolicy`` on `database` and indexes versions by note (so that a save finds
    /// its note's versions without a scan). Call it wherever a database is opened for notes; a
    /// second call only replaces the settings.
    public static func install(on database: RecordDatabase, settings: HistorySettings = .fromEnvironment()) {
        database.indexField("note", ofType: Version.recordType)
        database.indexField("deltaBase", ofType: Version.recordType)
        database.setCommitHook(VersionPolicy(settings: settings))
    }

    /// The versions of the note (or attachment) named `recordName`, oldest first; live or deleted.
    /// Long texts are left out (``Version/text`` is nil): ``fullVersion(_:in:)`` reads one.
    public static func versions(ofNoteNamed recordName: String, in database: RecordDatabase) -> [Version] {
        database.metadata(ofType: Version.recordType, whereField: "note", equals: recordName)
            .compactMap { try? Version(record: $0.record) }
            .sorted { ($0.date, $0.recordID.recordName) < ($1.date, $1.recordID.recordName) }
    }

    /// The whole version (its text read from its file; a delta's made from its base, see
    /// ``VersionDelta``).
    /// - Throws: ``NotesError/store(_:)`` (`unknownItem` when it is gone), ``NotesError/invalidField(_:key:)``
    ///   (a damaged version, or a delta whose chain is broken).
    public static func fullVersion(_ id: RecordID, in database: RecordDatabase) throws(NotesError) -> Version {
        let record: Record
        do { record = try database.record(for: id) } catch { throw .store(error) }
        return try Version(record: materialized(record, in: database))
    }

    /// `record` (a version's whole record) with its text whole: a delta's chain of bases followed
    /// (at most ``VersionDelta/maxDepth``, never in a cycle) to a version that keeps its text.
    public static func materialized(_ record: Record, in database: RecordDatabase) throws(NotesError) -> Record {
        try materialized(record) { (name) throws(NotesError) -> Record in
            do throws(RecordStoreError) { return try database.record(for: RecordID(recordName: name)) } catch { throw .store(error) }
        }
    }

    /// ``materialized(_:in:)`` reading bases through `read` (by record name).
    static func materialized(_ record: Record, read: (String) throws(NotesError) -> Record) throws(NotesError) -> Record {
        guard let first = try VersionDelta(record: record) else { return record }
        func damaged(_ reason: String) -> NotesError { .damagedVersion(record.recordID, reason: reason) }
        var deltas = [first]
        var seen: Set<String> = [record.recordID.recordName]
        var text: String
        while true {
            let base = deltas[deltas.count - 1].base
            guard seen.insert(base).inserted else { throw damaged("its chain of bases goes round (at \(base))") }
            guard deltas.count <= VersionDelta.maxDepth else { throw damaged("its chain of bases is longer than \(VersionDelta.maxDepth)") }
            let baseRecord: Record
            do { baseRecord = try read(base) } catch { throw damaged("its base \(base) cannot be read (\(error))") }
            guard baseRecord.recordType == Version.recordType, baseRecord["note"] == record["note"] else {
                throw damaged("its base \(base) is not a version of the same note")
            }
            if let next = try VersionDelta(record: baseRecord) {
                deltas.append(next)
                continue
            }
            guard let whole = baseRecord["text"]?.stringValue else { throw damaged("its base \(base) holds no text") }
            text = whole
            break
        }
        for delta in deltas.reversed() {
            guard let next = delta.apply(to: text) else { throw damaged("it does not fit its base \(delta.base)") }
            text = next
        }
        return VersionDelta.whole(record, text: text)
    }

    /// The last version of every deleted note (or attachment) whose record is gone: the newest
    /// `delete` version of each, newest first; only those deleted at or after `since`, and in the
    /// folder named `folderName` when given (`.some(nil)`: the root).
    public static func deletedNotes(in database: RecordDatabase, since: Date? = nil, folder: String?? = .none) -> [Version] {
        let deletes = database.metadata(ofType: Version.recordType) { $0.field("kind")?.stringValue == Version.Kind.delete.rawValue }
        var newest: [String: Version] = [:]
        for metadata in deletes {
            guard let version = try? Version(record: metadata.record) else { continue }
            if let current = newest[version.noteName], current.madeAt >= version.madeAt { continue }
            newest[version.noteName] = version
        }
        return newest.values.filter { version in
            guard database.metadata(for: RecordID(recordName: version.noteName)) == nil else { return false }
            if let since, version.madeAt < since { return false }
            if case .some(let folder) = folder, version.folderName != folder { return false }
            return true
        }.sorted { $0.madeAt > $1.madeAt }
    }

    /// The record name of the folder an undeleted note goes to when its own folder is gone: the
    /// same `Recovered` folder a sync uses for records whose folder was deleted.
    public static let recoveredFolderName = "notesfs-recovered"

    /// Puts `version`'s bytes back: into its note when the note exists (which keeps its title and
    /// folder; the state replaced becomes a `restore` version, so a restore can be undone), else as
    /// the note itself again, with its record name, title, folder, mode, owner, group and dates.
    /// A note made again goes into `folder` when given (`.some(nil)`: the root), else its own
    /// folder; when that is gone too, the folders of the path it had, made again where missing
    /// (``Version/folderNames``), else `Recovered`. Returns the note's record as saved.
    ///
    /// - Throws: ``NotesError/store(_:)``: a conflict when the note changed meanwhile, a `folder`
    ///   that is not there (`unknownItem`), I/O.
    @discardableResult
    public static func restore(_ version: Version, into folder: RecordID?? = .none, in database: RecordDatabase) throws(NotesError)
        -> Record
    {
        let full = version.text == nil && version.content == nil ? try fullVersion(version.recordID, in: database) : version
        let noteID = RecordID(recordName: full.noteName)
        var saving: [Record] = []
        var record: Record
        if database.metadata(for: noteID) != nil {
            do { record = try database.record(for: noteID) } catch { throw .store(error) }
        } else {
            record = Record(recordType: full.noteType == Attachment.recordType ? Attachment.recordType : Note.recordType, recordID: noteID)
            record[record.recordType == Note.recordType ? "title" : "name"] = .string(full.title)
            var target = full.folderName.map { RecordID(recordName: $0) }
            if case .some(let chosen) = folder {
                if let chosen, database.metadata(for: chosen)?.recordType != Folder.recordType { throw .store(.unknownItem(chosen)) }
                target = chosen
            } else if let id = target, database.metadata(for: id)?.recordType != Folder.recordType {
                if let names = full.folderNames, !names.isEmpty {
                    target = folderPath(names, in: database, creating: &saving)
                } else {
                    let recovered = RecordID(recordName: recoveredFolderName)
                    if database.metadata(for: recovered) == nil { saving.append(Folder(name: "Recovered", recordID: recovered).record) }
                    target = recovered
                }
            }
            record.setReference("folder", to: target)
            keepMetadata(of: full, in: &record)
        }
        if record.recordType == Attachment.recordType {
            record["content"] = full.content.map(FieldValue.asset)  // an attachment has no text
        } else if let asset = full.content {
            record["content"] = .asset(asset)
            record["text"] = nil
        } else {
            record["text"] = .string(full.text ?? "")
            record["content"] = nil
        }
        do throws(RecordStoreError) {
            let saved = try database.modify(saving: saving + [record], reason: .restore).savedRecords
            guard let note = saved.first(where: { $0.recordID == noteID }) else { throw RecordStoreError.unknownItem(noteID) }
            return note
        } catch { throw .store(error) }
    }

    /// The folder at the path of folder `names` from the root: each an existing folder of that
    /// name (the oldest, when there are several), else a new one appended to `saving`.
    static func folderPath(_ names: [String], in database: RecordDatabase, creating saving: inout [Record]) -> RecordID {
        let folders = database.metadata(ofType: Folder.recordType)
        var parent: RecordID?
        var creating = false
        for name in names {
            if !creating,
                let existing = folders.filter({
                    $0.field("name")?.stringValue == name && $0.field("parent")?.referenceValue?.recordID == parent
                }).min(by: { ($0.creationDate ?? .distantPast, $0.recordID) < ($1.creationDate ?? .distantPast, $1.recordID) })
            {
                parent = existing.recordID
                continue
            }
            creating = true
            let folder = Folder(name: name, parent: parent, recordID: RecordID(recordName: UUID.random().uuidString.lowercased()))
            saving.append(folder.record)
            parent = folder.recordID
        }
        return parent ?? RecordID(recordName: recoveredFolderName)
    }

    /// Gives `record`, a note made again from `version`, the note's metadata as the version kept
    /// it: mode (without setuid and setgid: a version may come from another machine), owner,
    /// group, extended attributes, creation date, and the modification date the state had. Values out of range (a
    /// damaged or forged version) are left out: the mount's defaults apply then.
    static func keepMetadata(of version: Version, in record: inout Record) {
        if let mode = version.mode, (0...0o7777).contains(mode), let uid = version.uid, let gid = version.gid,
            (0...Int64(UInt32.max)).contains(uid), (0...Int64(UInt32.max)).contains(gid)
        {
            Ownership(mode: UInt32(mode & 0o1777), uid: UInt32(uid), gid: UInt32(gid)).write(into: &record)
        }
        if let xattrs = version.record[ExtendedAttributes.fieldKey], ExtendedAttributes.validityProblem(of: version.record) == nil {
            record[ExtendedAttributes.fieldKey] = xattrs
        }
        if let created = version.noteCreationDate, created.timeIntervalSince1970.isFinite { record.setCreationDate(created) }
        if version.record["date"]?.dateValue != nil { record.modificationDate = version.date }
    }

    /// A version's date as the index holds it (``Version/date``).
    static func date(of metadata: RecordMetadata) -> Date {
        metadata.field("date")?.dateValue ?? metadata.creationDate ?? Date(timeIntervalSince1970: 0)
    }
}

extension Version {
    /// When the version was made (its record's creation): for a `delete` version, when the note was deleted.
    public var madeAt: Date { record.creationDate ?? date }
}

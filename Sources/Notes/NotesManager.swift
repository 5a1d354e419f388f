import Foundation
import Index
import RecordStore
import Synchronization

/// What happened to a note, as delivered by ``NotesManager/noteUpdates`` and the `NoteWasUpdated` notification.
public enum NoteUpdate: Sendable, Hashable {
    case saved(RecordID)
    case deleted(RecordID)
}

extension Notification.Name {
    /// Posted on `NotificationCenter.default` for every note saved or deleted (by any process);
    /// `object` is the ``NoteUpdate``.
    public static let noteWasUpdated = Notification.Name("NoteWasUpdated")
}

/// The notes API over a record database: the seed's `CloudKitNotesManager`, typed and async.
public final class NotesManager: Sendable {
    public let database: RecordDatabase
    private let observerID: UInt64
    private let continuations = UpdateContinuations()

    /// A manager of `database`, with note history on (``VersionHistory/install(on:settings:)``)
    /// unless a commit hook is installed already.
    public init(database: RecordDatabase) {
        self.database = database
        if database.installedCommitHook == nil { VersionHistory.install(on: database) }
        let continuations = self.continuations
        observerID = database.addObserver { change in
            var updates: [NoteUpdate] = []
            for metadata in change.saved where metadata.recordType == Note.recordType { updates.append(.saved(metadata.recordID)) }
            for metadata in change.deleted where metadata.recordType == Note.recordType { updates.append(.deleted(metadata.recordID)) }
            for update in updates {
                continuations.yield(update)
                NotificationCenter.default.post(name: .noteWasUpdated, object: update)
            }
        }
    }

    deinit {
        database.removeObserver(observerID)
        continuations.finishAll()
    }

    /// Every note saved or deleted from now on, by this process or another.
    public var noteUpdates: AsyncStream<NoteUpdate> { continuations.makeStream() }

    // MARK: The seed's API

    /// Creates and saves a folder.
    public func newFolder(name: String, parent: Folder? = nil) async throws(NotesError) -> Folder {
        try await save(Folder(name: name, parent: parent?.recordID))
    }

    /// Saves a note (a new one, or one fetched earlier: a stale one fails with a conflict).
    public func save(note: Note) async throws(NotesError) -> Note { try await save(note) }

    /// Deletes a folder and, in the same atomic step, its subfolders, notes and attachments.
    /// Returns every deleted record.
    @discardableResult
    public func delete(folder: Folder) async throws(NotesError) -> [RecordID] { try await delete(folder) }

    /// The notes in a folder (nil: at the root), newest `modificationDate` first: the notes the
    /// mount shows there (``FolderContents``).
    public func fetchNotes(for folder: Folder?) async throws(NotesError) -> [Note] {
        try fetchNotesNow(in: folder?.recordID)
    }

    /// The folders inside `parent` (nil: top level), by name: the folders the mount shows there
    /// (a folder on a parent cycle shows under `Recovered`, not in its parent).
    public func fetchFolders(in parent: Folder?) async throws(NotesError) -> [Folder] {
        let folders: [Folder] = try fetch(members(of: parent?.recordID, ofType: Folder.recordType))
        return folders.sorted { $0.name < $1.name }
    }

    // MARK: Folder contents and paths, as the mount shows them

    /// What `folder` holds (nil: the root), named as the mount names it, by file name: folders,
    /// notes, attachments and other files; at the root also the virtual `Recovered` folder when
    /// something is recovered (``FolderContents``).
    public func contents(of folder: Folder?) -> [FolderEntry] {
        FolderContents(database: database).children(of: folder?.recordID)
    }

    /// The path of a folder, note or attachment as the mount shows it (a folder's without a
    /// trailing `/`); nil when no folder shows it.
    public func path<W: RecordWrapper>(of item: W) -> String? {
        FolderContents(database: database).path(of: item.recordID)
    }

    /// The entry a path names (as the mount shows it; a note's `.md` may be left out); nil for the root.
    ///
    /// - Throws: ``NotesError/notFound(_:)`` when the path names nothing.
    public func entry(at path: String) throws(NotesError) -> FolderEntry? {
        do { return try FolderContents(database: database).resolve(path) } catch {
            switch error {
            case .notFound(let subject, let reason): throw .notFound("\(subject): \(reason)")
            }
        }
    }

    // MARK: History

    /// The kept versions of a note (or attachment), oldest first (``VersionHistory``); the current
    /// state is the note itself. Long texts are left out: ``fullVersion(_:)`` reads a version's text.
    public func versions<W: RecordWrapper>(of item: W) async -> [Version] {
        VersionHistory.versions(ofNoteNamed: item.recordID.recordName, in: database)
    }

    /// `version` with its text (or content) whole: read from its record, or made from the newer
    /// version it is kept as a delta of.
    public func fullVersion(_ version: Version) async throws(NotesError) -> Version {
        try VersionHistory.fullVersion(version.recordID, in: database)
    }

    /// Puts `version`'s bytes back into `note` (or brings a deleted note back); the state it
    /// replaces is kept as a `restore` version. Returns the note as saved.
    public func restore(_ note: Note, to version: Version) async throws(NotesError) -> Note {
        guard version.noteName == note.recordID.recordName else { throw .invalidField(version.recordID, key: "note") }
        return try Note(record: VersionHistory.restore(version, in: database))
    }

    // MARK: Generic save and delete

    /// Saves any wrapped record with a CloudKit save policy; returns it as stored.
    public func save<W: RecordWrapper>(_ item: W, policy: SavePolicy = .ifServerRecordUnchanged) async throws(NotesError) -> W {
        let saved: Record
        do throws(RecordStoreError) {
            guard let first = try database.modify(saving: [item.record], savePolicy: policy).savedRecords.first else {
                throw RecordStoreError.unknownItem(item.recordID)
            }
            saved = first
        } catch { throw .store(error) }
        return try W(record: saved)
    }

    /// Deletes any wrapped record (cascading); returns every deleted record.
    @discardableResult
    public func delete<W: RecordWrapper>(_ item: W) async throws(NotesError) -> [RecordID] {
        do { return try database.modify(deleting: [item.recordID]).deletedRecordIDs } catch { throw .store(error) }
    }

    /// Fetches a record as a typed wrapper.
    public func fetch<W: RecordWrapper>(_ type: W.Type, id: RecordID) async throws(NotesError) -> W {
        let record: Record
        do { record = try database.record(for: id) } catch { throw .store(error) }
        return try W(record: record)
    }

    // MARK: Helpers

    func fetchNotesNow(in folder: RecordID?) throws(NotesError) -> [Note] {
        let notes: [Note] = try fetch(members(of: folder, ofType: Note.recordType))
        return notes.sorted { ($0.modificationDate ?? .distantPast) > ($1.modificationDate ?? .distantPast) }
    }

    /// The records of `recordType` that `folder` (nil: the root) shows.
    private func members(of folder: RecordID?, ofType recordType: String) -> [RecordID] {
        var ids: [RecordID] = []
        FolderContents(database: database).forEachMember(of: folder) { metadata in
            if metadata.recordType == recordType { ids.append(metadata.recordID) }
        }
        return ids
    }

    /// The records `ids`, wrapped, in one read.
    private func fetch<W: RecordWrapper>(_ ids: [RecordID]) throws(NotesError) -> [W] {
        let records = database.records(for: ids)
        var wrapped: [W] = []
        for id in ids {
            switch records[id] {
            case .success(let record): wrapped.append(try W(record: record))
            case .failure(let error): throw .store(error)
            case nil: throw .store(.unknownItem(id))
            }
        }
        return wrapped
    }
}

/// The open `noteUpdates` streams.
private final class UpdateContinuations: Sendable {
    private let streams = Mutex<[UUID: AsyncStream<NoteUpdate>.Continuation]>([:])

    func makeStream() -> AsyncStream<NoteUpdate> {
        let id = UUID.random()
        let (stream, continuation) = AsyncStream<NoteUpdate>.makeStream()
        continuation.onTermination = { [weak self] _ in _ = self?.streams.withLock { $0.removeValue(forKey: id) } }
        streams.withLock { $0[id] = continuation }
        return stream
    }

    func yield(_ update: NoteUpdate) {
        for continuation in streams.withLock({ Array($0.values) }) { continuation.yield(update) }
    }

    func finishAll() {
        for continuation in streams.withLock({ Array($0.values) }) { continuation.finish() }
    }
}

extension NotesManager {
    /// The notes matching `query` (words, "phrases", prefix*, AND, OR, NOT; case and diacritics
    /// folded), best first; title matches weigh more than text matches. Uses the database's
    /// full-text index (built on first use, then caught up with every commit).
    ///
    /// - Throws: ``NotesError/search(_:)`` for a malformed query or an index that cannot be read.
    public func search(_ query: String, limit: Int = 50) async throws(NotesError) -> [Note] {
        let parsed: SearchQuery
        do { parsed = try SearchQuery(query) } catch {
            throw .search(error.description)
        }
        let index = NotesSearchIndex(database: database)
        let hits: [SearchHit]
        do { hits = try index.search(parsed, limit: limit).hits } catch {
            throw .search(error.description)
        }
        var notes: [Note] = []
        for hit in hits where hit.recordType == Note.recordType {
            if let note = try? await fetch(Note.self, id: RecordID(recordName: hit.name)) { notes.append(note) }
        }
        return notes
    }
}

import Foundation
import Notes
import RecordStore
import Synchronization
import TestSupport
import Testing

func makeManager() throws -> NotesManager {
    let path = makeTemporaryDirectory("notesfs-notes")
    return NotesManager(database: try RecordDatabase(path: path, backgroundThread: false))
}

@Suite struct NotesManagerTests {
    @Test func foldersNotesAndNewestFirst() async throws {
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        let sub = try await notes.newFolder(name: "Sub", parent: work)
        #expect(sub.parent == work.recordID)
        var older = Note(title: "Older", text: "a", folder: work.recordID)
        older.setModificationDate(Date(timeIntervalSince1970: 1_000_000))
        _ = try await notes.save(note: older)
        _ = try await notes.save(note: Note(title: "Newer", text: "b", folder: work.recordID))
        _ = try await notes.save(note: Note(title: "Elsewhere", folder: sub.recordID))
        let fetched = try await notes.fetchNotes(for: work)
        #expect(fetched.map(\.title) == ["Newer", "Older"])
        #expect(fetched.map(\.text) == ["b", "a"])
        #expect(try await notes.fetchFolders(in: work).map(\.name) == ["Sub"])
        #expect(try await notes.fetchFolders(in: nil).map(\.name) == ["Work"])
    }

    /// The manager lists folders and names paths as the mount does (``FolderContents``).
    @Test func contentsAndPathsAsTheMountShowsThem() async throws {
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        let first = try await notes.save(note: Note(title: "a/b", text: "one", folder: work.recordID))
        let second = try await notes.save(note: Note(title: "a/b", text: "two", folder: work.recordID))
        #expect(notes.contents(of: nil).map(\.fileName) == ["Work"])
        #expect(notes.contents(of: work).map(\.recordID) == [second.recordID, first.recordID])  // by file name: "a∕b (…).md" first
        #expect(notes.path(of: first) == "Work/a∕b.md")
        let suffix = EntryNames.suffixCharacters(second.recordID.recordName).prefix(6)
        #expect(notes.path(of: second) == "Work/a∕b (\(suffix)).md")
        #expect(notes.path(of: work) == "Work")
        let found = try notes.entry(at: "Work/a∕b")
        #expect(found?.recordID == first.recordID)
        #expect(throws: NotesError.notFound("Work/none: no such folder, note or attachment")) { try notes.entry(at: "Work/none") }
    }

    @Test func deletingAFolderCascadesAndUpdatesAreObservable() async throws {
        let notes = try makeManager()
        let received = Mutex<[NoteUpdate]>([])
        let observer = NotificationCenter.default.addObserver(forName: .noteWasUpdated, object: nil, queue: nil) { notification in
            if let update = notification.object as? NoteUpdate { received.withLock { $0.append(update) } }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        var stream = notes.noteUpdates.makeAsyncIterator()
        let folder = try await notes.newFolder(name: "F")
        let child = try await notes.newFolder(name: "Child", parent: folder)
        let note = try await notes.save(note: Note(title: "N", folder: child.recordID))
        #expect(await stream.next() == .saved(note.recordID))
        let deleted = try await notes.delete(folder: folder)
        #expect(Set(deleted) == [folder.recordID, child.recordID, note.recordID])
        #expect(await stream.next() == .deleted(note.recordID))
        #expect(received.withLock { $0 }.contains(.deleted(note.recordID)))
        await #expect(throws: NotesError.store(.unknownItem(note.recordID))) {
            try await notes.fetch(Note.self, id: note.recordID)
        }
    }

    @Test func staleSaveIsAConflictAndWrongTypesAreTypedErrors() async throws {
        let notes = try makeManager()
        let saved = try await notes.save(note: Note(title: "T", text: "one"))
        var first = saved
        first.text = "two"
        _ = try await notes.save(note: first)
        var stale = saved
        stale.text = "three"
        await #expect {
            try await notes.save(note: stale)
        } throws: { error in
            if case NotesError.store(.serverRecordChanged) = error { return true }
            return false
        }
        #expect(throws: NotesError.wrongRecordType(expected: "Folder", found: "Note")) { try Folder(record: saved.record) }
        var bad = Record(recordType: "Note")
        bad["title"] = .int64(3)
        #expect(throws: NotesError.invalidField(bad.recordID, key: "title")) { try Note(record: bad) }
    }
}

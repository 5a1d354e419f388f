import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

/// A database with note history on (a 10-minute interval), in a fresh directory.
private func historyDatabase(interval: TimeInterval = 600) throws -> RecordDatabase {
    let path = makeTemporaryDirectory("notesfs-history")
    let database = try RecordDatabase(path: path, backgroundThread: false)
    VersionHistory.install(on: database, settings: HistorySettings(interval: interval))
    return database
}

private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

/// Saves `text` into the note as of `date` (an injected modification date: no sleeps).
@discardableResult
private func save(_ record: inout Record, _ text: String, at date: Date, in database: RecordDatabase, reason: ModifyReason? = nil)
    throws -> Record
{
    record["text"] = .string(text)
    record.modificationDate = date
    record = try database.modify(saving: [record], reason: reason).savedRecords.first { $0.recordType == Note.recordType }!
    return record
}

@Suite struct VersionHistoryTests {
    @Test func aStormOfSavesKeepsTheStateAtLeastEveryInterval() throws {
        let database = try historyDatabase()
        var record = Note(title: "Plan", text: "").record
        try save(&record, "state 0", at: t0, in: database)
        // A save a minute for an hour (an editor's autosave).
        for minute in 1...60 { try save(&record, "state \(minute)", at: t0 + Double(minute * 60), in: database) }
        let versions = VersionHistory.versions(ofNoteNamed: record.recordID.recordName, in: database)
        #expect(versions.map { $0.date.timeIntervalSince(t0) } == [0, 600, 1200, 1800, 2400, 3000])
        #expect(versions.map(\.text) == ["state 0", "state 10", "state 20", "state 30", "state 40", "state 50"])
        #expect(versions.allSatisfy { $0.kind == .edit && $0.title == "Plan" && $0.size == Int64($0.text!.utf8.count) })
        // Every state's age gap to the next kept one is at most the interval.
        let dates = versions.map(\.date) + [record.modificationDate!]
        #expect(zip(dates, dates.dropFirst()).allSatisfy { $1.timeIntervalSince($0) <= 600 })
    }

    @Test func specialEventsAlwaysKeepAVersion() throws {
        let database = try historyDatabase()
        var record = Note(title: "N", text: "").record
        try save(&record, "a", at: t0, in: database)
        try save(&record, "b", at: t0 + 1, in: database)  // keeps "a"
        try save(&record, "c", at: t0 + 2, in: database)  // coalesced
        try save(&record, "d", at: t0 + 3, in: database, reason: .editKeepingVersion)  // note edit: keeps "c"
        try save(
            &record, "e", at: t0 + 4, in: database, reason: ModifyReason("sync", records: [record.recordID.recordName: ModifyReason.merge]))
        try save(&record, "f", at: t0 + 5, in: database, reason: .sync)  // another machine's change: none
        // The same bytes again, and a metadata-only change: none.
        try save(&record, "f", at: t0 + 6, in: database, reason: .editKeepingVersion)
        var partial = try #require(database.metadata(for: record.recordID)).record
        partial["title"] = .string("Renamed")
        try database.modify(saving: [partial], reason: .editKeepingVersion)
        let kinds = VersionHistory.versions(ofNoteNamed: record.recordID.recordName, in: database).map { "\($0.kindName):\($0.text!)" }
        #expect(kinds == ["edit:a", "edit:c", "merge:d"])
    }

    @Test func deletesKeepTheLastVersionAndUndeleteBringsItBack() throws {
        let database = try historyDatabase()
        let work = try database.modify(saving: [Folder(name: "Work").record]).savedRecords[0]
        var plan = Note(title: "Plan", text: "", folder: work.recordID).record
        try save(&plan, "v1", at: t0, in: database)
        var other = Note(title: "Other", text: "", folder: work.recordID).record
        try save(&other, "kept", at: t0, in: database)
        try database.modify(deleting: [plan.recordID])
        var deleted = VersionHistory.deletedNotes(in: database)
        #expect(deleted.map(\.title) == ["Plan"])
        #expect(deleted.first?.kind == .delete && deleted.first?.folderName == work.recordID.recordName)
        // Undelete: the same record name, title, folder and text.
        let back = try VersionHistory.restore(deleted[0], in: database)
        #expect(back.recordID == plan.recordID)
        #expect(back["text"] == .string("v1"))
        #expect(back["folder"]?.referenceValue?.recordID == work.recordID)
        #expect(VersionHistory.deletedNotes(in: database).isEmpty)
        // A folder delete keeps the last version of every note in it; with the folder gone an
        // undeleted note goes to a folder of its name made again (Recovered for a version that
        // does not name its folders).
        try database.modify(deleting: [work.recordID])
        deleted = VersionHistory.deletedNotes(in: database)
        #expect(Set(deleted.map(\.title)) == ["Plan", "Other"])
        let other2 = try VersionHistory.restore(try #require(deleted.first { $0.title == "Other" }), in: database)
        #expect(other2["text"] == .string("kept"))
        let remade = try #require(other2["folder"]?.referenceValue?.recordID)
        #expect(remade != work.recordID && database.metadata(for: remade)?.field("name") == .string("Work"))
        var plain = try #require(deleted.first { $0.title == "Plan" }).record
        plain["folderNames"] = nil
        let plan2 = try VersionHistory.restore(try Version(record: plain), in: database)
        #expect(plan2["folder"]?.referenceValue?.recordID.recordName == VersionHistory.recoveredFolderName)
        #expect(database.metadata(for: RecordID(recordName: VersionHistory.recoveredFolderName))?.field("name") == .string("Recovered"))
    }

    /// An undelete gives the note back as it was: mode, owner, group, creation and modification
    /// dates (not the defaults and today's dates); a restore keeps the note's own.
    @Test func undeleteAndRestoreKeepModeOwnerAndDates() throws {
        let database = try historyDatabase()
        let created = Date(timeIntervalSince1970: 1_580_000_000)  // 2020
        var note = Note(title: "Private", text: "")
        note.ownership = Ownership(mode: 0o600, uid: 1000, gid: 1001)
        var record = note.record
        var xattrs = ExtendedAttributes()
        try xattrs.set("user.tag", to: [0, 1, 0xff])
        xattrs.write(into: &record)
        record.setCreationDate(created)
        try save(&record, "secret v1", at: created + 60, in: database)
        try save(&record, "secret v2", at: created + 86_400, in: database)
        try database.modify(deleting: [record.recordID])
        let version = try #require(VersionHistory.deletedNotes(in: database).first)
        // Kept in the version under the note's own field names (what `.history/` shows them by).
        #expect(["mode", "uid", "gid"].map { version.record[$0]?.int64Value } == [0o600, 1000, 1001])
        let back = try VersionHistory.restore(version, in: database)
        #expect(back["text"] == .string("secret v2"))
        #expect(try Note(record: back).ownership == Ownership(mode: 0o600, uid: 1000, gid: 1001))
        #expect(back.creationDate == created)
        #expect(back.modificationDate == created + 86_400)
        #expect(ExtendedAttributes(back)["user.tag"] == [0, 1, 0xff])
        // A restore of an older version keeps the note's mode, owner and creation date.
        let older = try #require(
            VersionHistory.versions(ofNoteNamed: record.recordID.recordName, in: database).first { $0.text == "secret v1" })
        let restored = try VersionHistory.restore(older, in: database)
        #expect(restored["text"] == .string("secret v1"))
        #expect(try Note(record: restored).ownership == Ownership(mode: 0o600, uid: 1000, gid: 1001))
        #expect(restored.creationDate == created)
    }

    @Test func aRestoreIsItselfAVersionAndCanBeUndone() async throws {
        let database = try historyDatabase()
        let notes = NotesManager(database: database)
        var record = Note(title: "N", text: "").record
        try save(&record, "first", at: t0, in: database)
        try save(&record, "second", at: t0 + 700, in: database)
        let note = try Note(record: record)
        let first = try #require(await notes.versions(of: note).first)
        #expect(first.text == "first")
        let restored = try await notes.restore(note, to: first)
        #expect(restored.text == "first")
        let versions = await notes.versions(of: restored)
        #expect(versions.map(\.kindName) == ["edit", "restore"])
        #expect(versions.last?.text == "second")
        // Undo the restore.
        let undone = try await notes.restore(restored, to: versions.last!)
        #expect(undone.text == "second")
    }

    @Test func attachmentVersionsShareTheirAssetAndKeepItAlive() throws {
        let database = try historyDatabase()
        let bytes = Data((0..<5000).map { UInt8($0 % 251) })
        let asset = try database.makeAsset(bytes)
        let attachment = try database.modify(saving: [Attachment(name: "pic.png", content: asset).record]).savedRecords[0]
        try database.modify(deleting: [attachment.recordID])
        try database.sync()  // collects the assets no record uses
        let version = try #require(VersionHistory.deletedNotes(in: database).first)
        #expect(version.content == asset)  // the same hash: no bytes copied
        #expect(try database.assetData(asset) == bytes)
        let back = try VersionHistory.restore(version, in: database)
        #expect(back.recordType == Attachment.recordType && back["content"] == .asset(asset))
    }

    @Test func aRenameOverKeepsTheTargetsVersionAndNotTheSources() throws {
        let database = try historyDatabase()
        var target = Note(title: "Plan", text: "").record
        try save(&target, "target text", at: t0, in: database)
        try save(&target, "target text 2", at: t0 + 1, in: database)  // keeps "target text"
        var source = Note(title: "Draft", text: "").record
        try save(&source, "draft text", at: t0 + 2, in: database)
        let identity = try #require(database.metadata(for: source.recordID)).identity
        target["text"] = .string("draft text")
        target.takeIdentity(identity)
        try database.modify(saving: [target], deleting: [source.recordID])
        #expect(VersionHistory.versions(ofNoteNamed: target.recordID.recordName, in: database).map(\.kindName) == ["edit", "rename"])
        #expect(VersionHistory.versions(ofNoteNamed: source.recordID.recordName, in: database).isEmpty)
    }

    @Test func theSettingsComeFromTheEnvironment() {
        let settings = HistorySettings.fromEnvironment(["NOTESFS_HISTORY_INTERVAL": "60", "NOTESFS_HISTORY_BUDGET": "5"])
        #expect(settings.interval == 60 && settings.budgetFraction == 0.05)
        var warnings: [String] = []
        #expect(
            HistorySettings.fromEnvironment(["NOTESFS_HISTORY_INTERVAL": "soon", "NOTESFS_HISTORY_BUDGET": "500"]) { warnings.append($0) }
                == HistorySettings())
        #expect(warnings.count == 2 && warnings.contains { $0.hasPrefix("NOTESFS_HISTORY_BUDGET='500'") })
    }
}

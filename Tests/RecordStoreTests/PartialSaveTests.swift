import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// Metadata-only saves: a record from the index (`RecordMetadata.record`, partial) saved with some
/// small fields changed keeps its large fields, writes no large value into the journal and no
/// record file, and reads back whole everywhere (other processes, reopen, lost snapshot).
@Suite struct PartialSaveTests {
    let longText = String(repeating: "a line of the note's text\n", count: 200)

    func recordFile(_ path: String, _ name: String) throws -> String {
        try String(contentsOfFile: path + "/" + RecordFileName.relativePath(for: name), encoding: .utf8)
    }

    func lastJournalLine(_ path: String) throws -> String {
        let lines = try String(contentsOfFile: path + "/journal.jsonl", encoding: .utf8).split(separator: "\n")
        return String(lines.last ?? "")
    }

    /// Saves note `n` with the long text, then renames it through its partial record.
    func renamed(_ db: RecordDatabase, to title: String) throws -> Record {
        let id = RecordID(recordName: "n")
        var partial = try #require(db.metadata(for: id)).record
        #expect(partial.isPartial)
        #expect(partial["text"] == nil)
        partial["title"] = .string(title)
        return try #require(try db.modify(saving: [partial]).savedRecords.first)
    }

    @Test func aRenameKeepsTheTextAndWritesNoneOfIt() throws {
        let path = makeTemporaryDirectory("partial")
        let db = try makeDatabase(path)
        try db.modify(saving: [note("n", folder: nil, text: longText)])
        let saved = try renamed(db, to: "Renamed")
        #expect(saved.isPartial)
        let line = try lastJournalLine(path)
        #expect(line.contains("Renamed"))
        #expect(!line.contains("a line of the note"))
        #expect(line.contains(#""sizes":{"text":\#(longText.utf8.count)}"#))
        let full = try db.record(for: RecordID(recordName: "n"))
        #expect(full["title"] == "Renamed")
        #expect(full["text"] == .string(longText))
        #expect(!full.isPartial)
        #expect(full.recordChangeTag == saved.recordChangeTag)
        // The file lags until the checkpoint, which brings it up to date.
        #expect(try recordFile(path, "n").contains(#""value":"n""#))
        try db.checkpoint()
        let file = try recordFile(path, "n")
        #expect(file.contains("Renamed") && file.contains("a line of the note"))
        #expect(!file.contains("sizes"))
        #expect(try db.check().problems.isEmpty)
    }

    @Test func anotherProcessAndAReopenSeeTheWholeRecord() throws {
        let path = makeTemporaryDirectory("partial-mp")
        let db = try makeDatabase(path)
        let other = try makeDatabase(path)
        try db.modify(saving: [note("n", folder: nil, text: longText)])
        _ = try renamed(db, to: "Moved on")
        try other.refresh()
        let seen = try other.record(for: RecordID(recordName: "n"))
        #expect(seen["title"] == "Moved on" && seen["text"] == .string(longText))
        let reopened = try makeDatabase(path)
        let again = try reopened.record(for: RecordID(recordName: "n"))
        #expect(again["title"] == "Moved on" && again["text"] == .string(longText))
        #expect(again.recordChangeTag == seen.recordChangeTag)
    }

    @Test func aFileNewerThanTheIndexIsReadAsItIs() throws {
        let path = makeTemporaryDirectory("partial-newer")
        let db = try makeDatabase(path)
        let other = try makeDatabase(path)
        try db.modify(saving: [note("n", folder: nil, text: longText)])
        _ = try renamed(db, to: "First")
        try other.refresh()
        var full = try other.record(for: RecordID(recordName: "n"))
        full["title"] = "Second"
        full["text"] = .string(longText + "more\n")
        try other.modify(saving: [full])
        // db has not read other's commit: the newer file is one whole version, not a mix.
        let read = try db.record(for: RecordID(recordName: "n"))
        #expect(read["title"] == "Second" && read["text"] == .string(longText + "more\n"))
    }

    @Test func aLostSnapshotIsRebuiltWithTheNewMetadata() throws {
        for checkpointFirst in [false, true] {
            let path = makeTemporaryDirectory("partial-rebuild")
            let db = try makeDatabase(path)
            try db.modify(saving: [note("n", folder: nil, text: longText)])
            try db.checkpoint()
            _ = try renamed(db, to: "After the checkpoint")
            if checkpointFirst { try db.checkpoint() }
            // After the checkpoint the journal holds no line: the rebuild reads only record files,
            // so they must be current.
            try FileManager.default.removeItem(atPath: path + "/indexes/records.sqlite")
            let reopened = try makeDatabase(path)
            let record = try reopened.record(for: RecordID(recordName: "n"))
            #expect(record["title"] == "After the checkpoint", "checkpoint first: \(checkpointFirst)")
            #expect(record["text"] == .string(longText))
        }
    }

    @Test func aPartialRecordWhoseTextBecameSmallTakesTheStoredText() throws {
        let path = makeTemporaryDirectory("partial-small")
        let db = try makeDatabase(path)
        try db.modify(saving: [note("n", folder: nil, text: longText)])
        var partial = try #require(db.metadata(for: RecordID(recordName: "n"))).record
        var full = try db.record(for: RecordID(recordName: "n"))
        full["text"] = "short now"
        try db.modify(saving: [full])
        partial["title"] = "Late rename"
        #expect(throws: RecordStoreError.self) { try db.modify(saving: [partial]) }  // stale change tag
        try db.modify(saving: [partial], savePolicy: .allKeys)
        let record = try db.record(for: RecordID(recordName: "n"))
        #expect(record["title"] == "Late rename" && record["text"] == "short now")
    }

    @Test func settingALeftOutFieldMakesAFullSave() throws {
        let path = makeTemporaryDirectory("partial-full")
        let db = try makeDatabase(path)
        try db.modify(saving: [note("n", folder: nil, text: longText)])
        var partial = try #require(db.metadata(for: RecordID(recordName: "n"))).record
        partial["text"] = .string("replaced " + longText)
        #expect(!partial.isPartial)
        try db.modify(saving: [partial])
        #expect(try recordFile(path, "n").contains("replaced a line"))
        #expect(try db.record(for: RecordID(recordName: "n"))["text"] == .string("replaced " + longText))
    }

    @Test func aPartialRecordCannotCreateOne() throws {
        let db = try makeDatabase()
        try db.modify(saving: [note("n", folder: nil, text: longText)])
        let partial = try #require(db.metadata(for: RecordID(recordName: "n"))).record
        try db.modify(deleting: [RecordID(recordName: "n")])
        #expect(throws: RecordStoreError.self) { try db.modify(saving: [partial], savePolicy: .allKeys) }
        #expect(db.metadata(for: RecordID(recordName: "n")) == nil)
    }

    @Test func aFormatOneDatabaseIsUpgradedWhenOpenedForWriting() throws {
        let path = makeTemporaryDirectory("format-upgrade")
        let db = try makeDatabase(path)
        try db.modify(saving: [note("n", folder: nil, text: "kept")])
        let id = db.databaseID
        try Data(#"{"format":1,"databaseID":"\#(id)"}"#.utf8).write(to: URL(fileURLWithPath: path + "/notesfs.json"))
        let reopened = try makeDatabase(path)
        #expect(reopened.databaseID == id)
        #expect(try reopened.record(for: RecordID(recordName: "n"))["text"] == "kept")
        let format = try String(contentsOfFile: path + "/notesfs.json", encoding: .utf8)
        #expect(format.contains(#""format":3"#))
    }

    @Test func aRecordOfSmallFieldsGetsItsFileWhenNewThenLater() throws {
        let path = makeTemporaryDirectory("partial-small-only")
        let db = try makeDatabase(path)
        try db.modify(saving: [folder("f"), note("n", folder: "f", text: "short")])
        // New records get their file with the commit, so a damaged journal cannot make them vanish.
        #expect(try recordFile(path, "f").contains(#""value":"f""#))
        var renamed = try db.record(for: RecordID(recordName: "f"))
        renamed["name"] = "g"
        try db.modify(saving: [renamed])
        // A save of small fields only: the journal and the index hold it, the file lags.
        #expect(try recordFile(path, "f").contains(#""value":"f""#))
        #expect(try db.record(for: RecordID(recordName: "f"))["name"] == "g")
        #expect(try db.check().problems.isEmpty)
        let reopened = try makeDatabase(path)
        #expect(try reopened.record(for: RecordID(recordName: "f"))["name"] == "g")
        try reopened.checkpoint()
        #expect(try recordFile(path, "f").contains(#""value":"g""#))
        try FileManager.default.removeItem(atPath: path + "/indexes/records.sqlite")
        let rebuilt = try makeDatabase(path)
        #expect(try rebuilt.record(for: RecordID(recordName: "f"))["name"] == "g")
        #expect(try rebuilt.record(for: RecordID(recordName: "n"))["folder"]?.referenceValue?.recordID.recordName == "f")
    }

    @Test func theBackgroundThreadRewritesOnlyFilesTheIndexHoldsWhole() throws {
        let path = makeTemporaryDirectory("partial-background")
        let db = try RecordDatabase(path: path, backgroundThread: true)
        try db.modify(saving: [folder("f"), note("n", folder: nil, text: longText)])
        var renamedFolder = try db.record(for: RecordID(recordName: "f"))
        renamedFolder["name"] = "Renamed folder"
        try db.modify(saving: [renamedFolder])
        _ = try renamed(db, to: "Renamed note")
        // The folder's fields are all in the index: its file is rewritten in place, in the background.
        var current = false
        for _ in 0..<100 where !current {
            usleep(50_000)
            current = (try? recordFile(path, "f").contains("Renamed folder")) == true
        }
        #expect(current)
        // The note's text is only in its file: that file waits for the checkpoint's temp + syncfs + rename.
        #expect(try recordFile(path, "n").contains(#""value":"n""#))
        try db.checkpoint()
        let file = try recordFile(path, "n")
        #expect(file.contains("Renamed note") && file.contains("a line of the note"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: path + "/tmp").filter { $0.hasSuffix(".tmp") }.isEmpty)
        try db.close()
    }

    @Test func aDamagedFileOfAWholeIndexRecordIsWrittenAgainByRepair() throws {
        let path = makeTemporaryDirectory("partial-repair")
        let db = try makeDatabase(path)
        try db.modify(saving: [folder("f"), note("n", folder: "f", text: longText)])
        try db.checkpoint()
        for name in ["f", "n"] {
            try Data("not json".utf8).write(to: URL(fileURLWithPath: path + "/" + RecordFileName.relativePath(for: name)))
        }
        // The folder's fields are all in the index: it reads; the note's text is only in its file.
        #expect(try db.record(for: RecordID(recordName: "f"))["name"] == "f")
        #expect(throws: RecordStoreError.self) { try db.record(for: RecordID(recordName: "n")) }
        #expect(try db.check().problems.count == 2)
        let repaired = try db.check(repair: true)
        #expect(repaired.droppedRecords == [RecordID(recordName: "n")])
        #expect(repaired.repaired.contains { $0.contains("record f: its file written again") })
        #expect(repaired.movedAside.count == 2)
        #expect(try db.check().problems.isEmpty)
        #expect(try recordFile(path, "f").contains(#""value":"f""#))
        #expect(try makeDatabase(path).record(for: RecordID(recordName: "f"))["name"] == "f")
    }

    @Test func anotherProcessesCheckpointBringsTheFileUpToDate() throws {
        let path = makeTemporaryDirectory("partial-other-checkpoint")
        let db = try makeDatabase(path)
        let other = try makeDatabase(path)
        try db.modify(saving: [note("n", folder: nil, text: longText)])
        _ = try renamed(db, to: "Renamed here")
        // The other handle checkpoints: it reads the journal first, so it knows the file lags.
        try other.checkpoint()
        let file = try recordFile(path, "n")
        #expect(file.contains("Renamed here") && file.contains("a line of the note"))
        // This handle goes on after the other's checkpoint (a new journal generation).
        _ = try renamed(db, to: "Renamed again")
        try other.refresh()
        #expect(try other.record(for: RecordID(recordName: "n"))["title"] == "Renamed again")
        try db.checkpoint()
        #expect(try recordFile(path, "n").contains("Renamed again"))
        try FileManager.default.removeItem(atPath: path + "/indexes/records.sqlite")
        let rebuilt = try makeDatabase(path)
        let record = try rebuilt.record(for: RecordID(recordName: "n"))
        #expect(record["title"] == "Renamed again" && record["text"] == .string(longText))
    }
}

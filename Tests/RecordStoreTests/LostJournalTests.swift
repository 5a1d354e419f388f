import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// The journal lost or unreadable: the record files are the truth (the index file is rebuilt from them).
@Suite struct LostJournalTests {
    func lostAndFound(_ path: String) -> [String] {
        (FileManager.default.subpaths(atPath: path + "/lost+found") ?? []).filter { !$0.hasSuffix("/") }.sorted()
    }

    @Test func aDeletedJournalBeforeAnyCheckpointKeepsEveryRecord() throws {
        let path = makeTemporaryDirectory("nojournal")
        let tags: [String?]
        do {
            let db = try makeDatabase(path)
            try db.modify(saving: [folder("f"), note("a", folder: "f", text: "hello")])
            try db.modify(saving: [note("b", folder: "f", text: String(repeating: "a large text ", count: 40))])
            tags = ["f", "a", "b"].map { db.metadata(for: RecordID(recordName: $0))?.recordChangeTag }
            try db.close()
        }
        #expect(!FileManager.default.fileExists(atPath: path + "/index.jsonl"))
        try FileManager.default.removeItem(atPath: path + "/journal.jsonl")
        let db = try makeDatabase(path)
        #expect(db.recordCount == 3)
        #expect(try db.record(for: RecordID(recordName: "a"))["text"] == "hello")
        #expect(try db.record(for: RecordID(recordName: "b"))["text"] == .string(String(repeating: "a large text ", count: 40)))
        #expect(db.referrers(to: RecordID(recordName: "f"), key: "folder").count == 2)
        #expect(try db.check().problems.isEmpty)
        let repaired = try db.check(repair: true)
        #expect(repaired.movedAside.isEmpty && repaired.droppedRecords.isEmpty)
        #expect(lostAndFound(path).isEmpty)
        // A later commit's change tag is none the files held.
        let saved = try db.modify(saving: [note("c", folder: "f")]).savedRecords
        #expect(!tags.contains(saved.first?.recordChangeTag))
        #expect(try makeDatabase(path).recordCount == 4)
    }

    @Test func aDeletedJournalAfterACheckpointTakesTheRecordFilesOverTheSnapshot() throws {
        let path = makeTemporaryDirectory("nojournal-snapshot")
        do {
            let db = try makeDatabase(path)
            try db.modify(saving: [note("gone", folder: nil, text: "deleted later"), note("kept", folder: nil, text: "old")])
            try db.checkpoint()
            try db.modify(saving: [note("new", folder: nil, text: "after the checkpoint")], deleting: [RecordID(recordName: "gone")])
            var kept = try db.record(for: RecordID(recordName: "kept"))
            kept["text"] = "edited after the checkpoint"
            try db.modify(saving: [kept])
            try db.close()
        }
        try FileManager.default.removeItem(atPath: path + "/journal.jsonl")
        let db = try makeDatabase(path)
        #expect(db.metadata(for: RecordID(recordName: "gone")) == nil)
        #expect(try db.record(for: RecordID(recordName: "new"))["text"] == "after the checkpoint")
        #expect(try db.record(for: RecordID(recordName: "kept"))["text"] == "edited after the checkpoint")
        #expect(db.recordCount == 2)
        // The index file, older than the files, is rebuilt from them.
        #expect(db.state.withLock { $0.index.entries.base?.header.count } == 2)
        #expect(try db.check().problems.isEmpty)
    }

    @Test func aRepairPutsAReadableRecordFileTheIndexLacksBackInTheIndex() throws {
        let path = makeTemporaryDirectory("unindexed")
        let db = try makeDatabase(path)
        try db.modify(saving: [note("indexed", folder: nil, text: "x")])
        // A record file no journal line or snapshot holds (as after a lost journal line).
        var stray = note("stray", folder: nil, text: "only in its file")
        stray.recordChangeTag = "zz"
        stray.identity = db.metadata(for: RecordID(recordName: "indexed"))?.identity
        try RecordFiles.write(stray, layout: db.layout, durable: false)
        let report = try db.check()
        #expect(report.problems == [.unindexedRecordFile(stray.recordID, path: db.layout.recordPath("stray"))])
        let repaired = try db.check(repair: true)
        #expect(repaired.movedAside.isEmpty)
        #expect(lostAndFound(path).isEmpty)
        #expect(try db.record(for: stray.recordID)["text"] == "only in its file")
        // Its identity was another record's: it got a new one.
        let identities = ["indexed", "stray"].compactMap { db.metadata(for: RecordID(recordName: $0))?.identity }
        #expect(Set(identities).count == 2)
        #expect(try db.check().problems.isEmpty)
        #expect(try makeDatabase(path).metadata(for: stray.recordID) != nil)
    }
}

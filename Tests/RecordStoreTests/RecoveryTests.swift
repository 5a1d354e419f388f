import Foundation
import TestSupport
import Testing

@testable import RecordStore

@Suite struct RecoveryTests {
    @Test func tornJournalTailIsCutAtOpen() throws {
        let path = makeTemporaryDirectory("torn")
        let db = try makeDatabase(path)
        try db.modify(saving: [note("kept", folder: nil, text: "safe")])
        let journal = FileHandle(forWritingAtPath: path + "/journal.jsonl")!
        journal.seekToEndOfFile()
        journal.write(Data(#"{"seq":2,"deletes":[],"saves":[{"recordName":"half"#.utf8))
        try journal.close()
        let reopened = try makeDatabase(path)
        #expect(try reopened.record(for: RecordID(recordName: "kept"))["text"] == "safe")
        #expect(reopened.metadata(for: RecordID(recordName: "half")) == nil)
        try reopened.modify(saving: [note("after", folder: nil)])
        let third = try makeDatabase(path)
        #expect(third.metadata(for: RecordID(recordName: "after")) != nil)
        #expect(try third.check().problems.isEmpty)
    }

    @Test func missingRecordFileIsRedoneFromTheJournal() throws {
        let path = makeTemporaryDirectory("redo")
        let db = try makeDatabase(path)
        try db.modify(saving: [note("n", folder: nil, text: "from the journal")])
        // As if the process died between the journal append and the record file write.
        try FileManager.default.removeItem(atPath: path + "/" + RecordFileName.relativePath(for: "n"))
        let reopened = try makeDatabase(path)
        #expect(try reopened.record(for: RecordID(recordName: "n"))["text"] == "from the journal")
    }

    @Test func checkpointSnapshotAndRebuild() throws {
        let path = makeTemporaryDirectory("checkpoint")
        let db = try makeDatabase(path)
        try db.modify(saving: [folder("f")] + (0..<50).map { note("n\($0)", folder: "f", text: "t\($0)") })
        try db.checkpoint()
        try db.modify(saving: [note("late", folder: "f")], deleting: [RecordID(recordName: "n0")])
        let identity = db.metadata(for: RecordID(recordName: "n7"))!.identity
        // From the snapshot plus the journal.
        let reopened = try makeDatabase(path)
        #expect(reopened.recordCount == 51)
        #expect(reopened.metadata(for: RecordID(recordName: "n7"))?.identity == identity)
        #expect(reopened.metadata(for: RecordID(recordName: "late")) != nil)
        #expect(reopened.referrers(to: RecordID(recordName: "f"), key: "folder").count == 50)
        // A lost snapshot is rebuilt from the record files.
        try FileManager.default.removeItem(atPath: path + "/indexes/records.sqlite")
        let rebuilt = try makeDatabase(path)
        #expect(rebuilt.recordCount == 51)
        #expect(rebuilt.metadata(for: RecordID(recordName: "n0")) == nil)
        #expect(rebuilt.metadata(for: RecordID(recordName: "n7"))?.identity == identity)
    }

    @Test func anotherHandleFollowsACheckpoint() throws {
        let path = makeTemporaryDirectory("follow")
        let a = try makeDatabase(path)
        let b = try makeDatabase(path)
        try a.modify(saving: [note("one", folder: nil)])
        try a.checkpoint()
        try a.modify(saving: [note("two", folder: nil)])
        try a.checkpoint()
        try a.modify(saving: [note("three", folder: nil)])
        try b.refresh()
        #expect(b.recordCount == 3)
        try b.modify(saving: [note("four", folder: nil)])
        try a.refresh()
        #expect(a.recordCount == 4)
    }
}

@Suite struct JournalReplayTests {
    @Test func manyJournalLinesReplayAtOpen() throws {
        let path = makeTemporaryDirectory("replay")
        let db = try makeDatabase(path)
        for i in 0..<30 {
            try db.modify(saving: [note("n\(i)", folder: nil, text: String(repeating: "line \(i)\n", count: i * 10))])
        }
        try db.modify(deleting: [RecordID(recordName: "n3")])
        let reopened = try makeDatabase(path)
        #expect(reopened.recordCount == 29)
        #expect(try reopened.record(for: RecordID(recordName: "n29"))["text"] == .string(String(repeating: "line 29\n", count: 290)))
        #expect(try reopened.check().problems.isEmpty)
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: path)).contains { $0.hasPrefix("journal.damaged") })
    }
}

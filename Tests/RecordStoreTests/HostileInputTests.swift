import Foundation
import TestSupport
import Testing

@testable import RecordStore

@Suite struct HostileInputTests {
    static let hostileNames = [
        "a/b", "..", "../../../../tmp/escaped", "/etc/passwd", "nul\u{0}byte", ".hidden", "%2e%2e",
        String(repeating: "é", count: 10_000), "line\nbreak", "emoji 🧪 e\u{301}", "back\\slash", "*?<>|:\"",
    ]

    @Test func hostileRecordNamesStayInsideTheDatabase() throws {
        let path = makeTemporaryDirectory("hostile")
        let db = try makeDatabase(path)
        let records = Self.hostileNames.map { name -> Record in
            var r = Record(recordType: "Note", recordID: RecordID(recordName: name))
            r["text"] = .string("content of \(name.prefix(20)) \u{FFFD}\u{0}\u{7F}")
            return r
        }
        try db.modify(saving: records)
        let reopened = try makeDatabase(path)
        for record in records {
            #expect(try reopened.record(for: record.recordID).fields == record.fields)
        }
        // Every file is under records/<shard>/, with a short name, and nothing was created outside.
        let enumerator = FileManager.default.enumerator(atPath: path + "/records")!
        var files = 0
        while let relative = enumerator.nextObject() as? String {
            let parts = relative.split(separator: "/")
            #expect(parts.count <= 2)
            #expect(parts.allSatisfy { $0.utf8.count <= 255 && !$0.hasPrefix(".") })
            if parts.count == 2 { files += 1 }
        }
        #expect(files == Self.hostileNames.count)
        #expect(!FileManager.default.fileExists(atPath: "/tmp/escaped.json"))
        #expect(try reopened.check().problems.isEmpty)
    }

    @Test func damagedAndForeignFilesAreReportedNotFatal() throws {
        let path = makeTemporaryDirectory("damage")
        let db = try makeDatabase(path)
        let long = String(repeating: "long text ", count: 40)
        try db.modify(saving: (0..<6).map { note("n\($0)", folder: nil, text: "text \($0) \(long)") })
        // Damage after a checkpoint: the journal no longer holds these records to redo them.
        try db.checkpoint()
        let truncated = path + "/" + RecordFileName.relativePath(for: "n1")
        let notJSON = path + "/" + RecordFileName.relativePath(for: "n2")
        let wrongTypes = path + "/" + RecordFileName.relativePath(for: "n3")
        let data = try Data(contentsOf: URL(fileURLWithPath: truncated))
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: truncated))
        try Data("this is not json".utf8).write(to: URL(fileURLWithPath: notJSON))
        try Data(#"{"recordName":"n3","recordType":"Note","fields":{"text":{"type":"int64","value":"nope"}}}"#.utf8).write(
            to: URL(fileURLWithPath: wrongTypes))
        try Data("stray".utf8).write(to: URL(fileURLWithPath: path + "/records/00/stray.json"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: path + "/README.txt"))

        let reopened = try makeDatabase(path)
        for name in ["n1", "n2", "n3"] {
            #expect {
                try reopened.record(for: RecordID(recordName: name))
            } throws: { error in
                if case RecordStoreError.damagedRecord(let id, _, _) = error { return id?.recordName == name }
                return false
            }
        }
        #expect(try reopened.record(for: RecordID(recordName: "n4"))["text"] == .string("text 4 \(long)"))
        // A query skips damaged records instead of failing.
        let all = try reopened.query(Query(recordType: "Note"))
        #expect(Set(all.records.map(\.recordID.recordName)) == ["n0", "n4", "n5"])
        // README.txt and stray.json were written with the test's umask: looseMode, checked in FileModeTests.
        var report = try reopened.check()
        report.problems.removeAll { if case .looseMode = $0 { true } else { false } }
        let damagedPaths = Set(
            report.problems.compactMap { problem -> String? in
                if case .damagedRecordFile(let p, _) = problem { return p }
                return nil
            })
        #expect(damagedPaths == [truncated, notJSON, wrongTypes, path + "/records/00/stray.json"])
        #expect(report.problems.contains(.foreignFile(path: path + "/README.txt")))
        #expect(report.problems.count == 5)
        // Repair moves the damaged files aside (keeps their bytes) and drops their records.
        let repaired = try reopened.check(repair: true)
        #expect(repaired.movedAside.count == 4)
        #expect(Set(repaired.droppedRecords.map(\.recordName)) == ["n1", "n2", "n3"])
        #expect(repaired.movedAside.allSatisfy { FileManager.default.fileExists(atPath: $0) })
        #expect(try reopened.check().problems == [.foreignFile(path: path + "/README.txt")])  // its mode was tightened
    }

    @Test func newerFormatIsRefusedClearly() throws {
        let path = makeTemporaryDirectory("format")
        _ = try makeDatabase(path)
        try Data(#"{"format":99,"databaseID":"x"}"#.utf8).write(to: URL(fileURLWithPath: path + "/notesfs.json"))
        #expect(throws: RecordStoreError.unsupportedFormat(found: 99, supported: 3)) { try makeDatabase(path) }
        #expect(RecordStoreError.unsupportedFormat(found: 99, supported: 3).description.contains("upgrade notesfs"))
    }

    @Test func aDirectoryOfOtherFilesIsNotTakenOver() throws {
        let path = makeTemporaryDirectory("other")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: path + "/thesis.tex"))
        #expect {
            try makeDatabase(path)
        } throws: { error in
            if case RecordStoreError.notADatabase = error { return true }
            return false
        }
        #expect(throws: RecordStoreError.notADatabase(path: path + "/missing", reason: "no such directory")) {
            try RecordDatabase(path: path + "/missing", create: false, backgroundThread: false)
        }
    }
}

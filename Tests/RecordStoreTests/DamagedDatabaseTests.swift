import Foundation
import TestSupport
import Testing

@testable import RecordStore

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Structural damage and hostile files: found by check(), never fatal, repaired or moved aside.
@Suite struct DamagedDatabaseTests {
    func lostAndFound(_ path: String) -> [String] {
        (FileManager.default.subpaths(atPath: path + "/lost+found") ?? []).sorted()
    }

    /// A repair's directory is named by the time in UTC, as ISO 8601 with `-` for `:` (counted,
    /// not formatted by Foundation or the C library, which load time zones at every open).
    @Test func lostAndFoundDirectoriesAreNamedByTheTimeInUTC() {
        #expect(LostAndFound.stamp(0) == "1970-01-01T00-00-00Z")
        #expect(LostAndFound.stamp(1_796_527_540) == "2026-12-06T03-25-40Z")
        #expect(LostAndFound.stamp(951_868_799) == "2000-02-29T23-59-59Z")
        #expect(LostAndFound.stamp(1_709_168_523) == "2024-02-29T01-02-03Z")
        #expect(LostAndFound.stamp(4_102_444_799) == "2099-12-31T23-59-59Z")
        let directory = LostAndFound(DatabaseLayout(root: "/db")).directory
        #expect(directory.hasPrefix("/db/lost+found/20"))
        #expect(directory.contains("Z-\(getpid())-"))
    }

    /// Grows a file to `size` without writing (a hole: no disk, no page cache).
    func grow(_ path: String, to size: Int64) throws {
        let fd = open(path, O_WRONLY | O_CREAT, 0o600)
        #expect(fd >= 0)
        defer { close(fd) }
        #expect(ftruncate(fd, off_t(size)) == 0)
    }

    @Test func aFolderCycleIsFoundAndBroken() throws {
        let path = makeTemporaryDirectory("cycle")
        let db = try makeDatabase(path)
        try db.modify(saving: [folder("a"), folder("b", parent: "a"), folder("c", parent: "b"), note("n", folder: "c")])
        var a = try db.record(for: RecordID(recordName: "a"))
        a["parent"] = .reference(Reference(recordID: RecordID(recordName: "c"), action: .deleteSelf))
        try db.modify(saving: [a])
        let report = try db.check()
        let cycles = report.problems.compactMap { problem -> [String]? in
            if case .referenceCycle(let key, let members) = problem, key == "parent" { return members.map(\.recordName) }
            return nil
        }
        #expect(cycles.count == 1)
        #expect(Set(cycles.first ?? []) == ["a", "b", "c"])
        #expect(report.problems.count == 1)

        let repaired = try db.check(repair: true)
        #expect(repaired.repaired.count == 1)
        #expect(try db.check().problems.isEmpty)
        // Every record is still there; exactly one folder became top-level.
        #expect(db.recordCount == 4)
        let topLevel = ["a", "b", "c"].filter { (try? db.record(for: RecordID(recordName: $0)))?["parent"] == nil }
        #expect(topLevel.count == 1)
    }

    @Test func aDanglingParentIsReported() throws {
        let path = makeTemporaryDirectory("dangling")
        let db = try makeDatabase(path)
        var orphan = folder("orphan")
        orphan["parent"] = .reference(Reference(recordID: RecordID(recordName: "gone"), action: .none))
        try db.modify(saving: [folder("gone")])
        try db.modify(saving: [orphan])
        try db.modify(deleting: [RecordID(recordName: "gone")])
        #expect(
            try db.check().problems == [
                .danglingReference(from: RecordID(recordName: "orphan"), key: "parent", to: RecordID(recordName: "gone"))
            ])
    }

    @Test func anOversizedRecordFileIsReportedNotRead() throws {
        let path = makeTemporaryDirectory("bigrecord")
        let db = try makeDatabase(path)
        // A large text: a full read needs the file (a record of small fields only is read from the index).
        let text = String(repeating: "a large field ", count: 40)
        try db.modify(saving: [note("big", folder: nil, text: text), note("fine", folder: nil, text: "fine")])
        try db.checkpoint()
        let file = path + "/" + RecordFileName.relativePath(for: "big")
        try grow(file, to: Int64(DatabaseLayout.recordFileLimit) + 1)
        #expect {
            try db.record(for: RecordID(recordName: "big"))
        } throws: { error in
            guard case RecordStoreError.damagedRecord(let id, _, let reason) = error else { return false }
            return id?.recordName == "big" && reason.contains("over the size limit")
        }
        let report = try db.check()
        #expect(report.problems.count == 1)
        guard case .damagedRecordFile(let reported, let reason)? = report.problems.first else {
            Issue.record("expected a damaged record file, got \(report.problems)")
            return
        }
        #expect(reported == file)
        #expect(reason.contains("over the size limit"))
        let repaired = try db.check(repair: true)
        #expect(repaired.droppedRecords == [RecordID(recordName: "big")])
        #expect(lostAndFound(path).contains { $0.hasSuffix(RecordFileName.relativePath(for: "big")) })
        #expect(try db.check().problems.isEmpty)
        #expect(try db.record(for: RecordID(recordName: "fine"))["text"] == .string("fine"))
    }

    @Test func aJournalLineOverTheLimitIsMovedAside() throws {
        let path = makeTemporaryDirectory("bigjournal")
        do {
            let db = try makeDatabase(path)
            try db.modify(saving: [note("kept", folder: nil, text: "before the damage")])
            try db.close()
        }
        // A line with no end, longer than the limit (a hole: costs no disk).
        let journal = path + "/journal.jsonl"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int)
        try grow(journal, to: Int64(size + DatabaseLayout.journalLineLimit + 4096))
        let db = try makeDatabase(path)
        #expect(try db.record(for: RecordID(recordName: "kept"))["text"] == .string("before the damage"))
        #expect(lostAndFound(path).contains { $0.hasSuffix("journal.jsonl") })
        #expect(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int == size)
        try db.modify(saving: [note("after", folder: nil)])
        #expect(try makeDatabase(path).recordCount == 2)
        #expect(try db.check().problems.isEmpty)
    }

    @Test func anUnreadableJournalOrSnapshotIsRebuiltFromTheRecordFiles() throws {
        let path = makeTemporaryDirectory("rebuild")
        do {
            let db = try makeDatabase(path)
            try db.modify(saving: [folder("f"), note("one", folder: "f", text: "1")])
            try db.checkpoint()
            try db.modify(saving: [note("two", folder: "f", text: "2")])
            try db.close()
        }
        // The journal's header is gone: zeros.
        try Data(count: 1 << 20).write(to: URL(fileURLWithPath: path + "/journal.jsonl"))
        do {
            let db = try makeDatabase(path)
            #expect(db.recordCount == 3)
            #expect(try db.record(for: RecordID(recordName: "two"))["text"] == .string("2"))
            try db.modify(saving: [note("three", folder: "f")])
            #expect(try db.check().problems.isEmpty)
            try db.checkpoint()
            try db.close()
        }
        // The index file is garbage: rebuilt from the record files and the journal (it is derived:
        // nothing to keep aside).
        try Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }).write(
            to: URL(fileURLWithPath: path + "/indexes/records.sqlite"))
        let db = try makeDatabase(path)
        #expect(db.recordCount == 4)
        #expect(db.state.withLock { $0.index.entries.base?.header.count } == 4)
        #expect(try db.check().problems.isEmpty)
    }

    @Test func everyFileIsPrivate() throws {
        let path = makeTemporaryDirectory("modes")
        let db = try makeDatabase(path)
        let asset = try db.makeAsset(Data("secret".utf8))
        var r = note("n", folder: nil, text: "secret")
        r["content"] = .asset(asset)
        try db.modify(saving: [r])
        try db.checkpoint()
        try db.close()
        #expect(db.looseModes().isEmpty)
        // A loosened database is reported, and repaired.
        chmod(path + "/records", 0o755)
        chmod(db.assetPath(asset), 0o644)
        #expect(db.looseModes().map(\.path) == [db.assetPath(asset), path + "/records"].sorted())
        _ = try db.check(repair: true)
        #expect(try db.check().problems.isEmpty)
    }

    @Test func numbersAtTheirLimitsFromDiskThrowInsteadOfTrapping() throws {
        let path = makeTemporaryDirectory("limits")
        do {
            let db = try makeDatabase(path)
            try db.modify(saving: [note("n", folder: nil)])
            try db.close()
        }
        // A hand-edited journal: the largest identity and commit number there are.
        let journal = path + "/journal.jsonl"
        var text = try String(contentsOfFile: journal, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"identity\":16", with: "\"identity\":18446744073709551615")
        text = text.replacingOccurrences(of: "{\"seq\":1,", with: "{\"seq\":18446744073709551615,")
        try text.write(toFile: journal, atomically: false, encoding: .utf8)
        let db = try makeDatabase(path)
        #expect(db.recordCount == 1)
        #expect(throws: RecordStoreError.self) { try db.modify(saving: [note("m", folder: nil)]) }
        #expect(throws: RecordStoreError.self) { try db.reserveIdentity() }
        #expect(db.recordCount == 1)
    }
}

import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// A journal line that cannot be read costs that line only: it is kept in lost+found, the lines
/// after it still apply, and its records come from their record files where those are readable.
@Suite struct DamagedJournalLineTests {
    /// The journal's lines (header first), each without its newline.
    func journalLines(_ path: String) throws -> [String] {
        try String(decoding: Data(contentsOf: URL(fileURLWithPath: path + "/journal.jsonl")), as: UTF8.self)
            .split(separator: "\n").map(String.init)
    }

    func writeJournal(_ path: String, _ lines: [String]) throws {
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path + "/journal.jsonl"))
    }

    /// The damaged lines kept in lost+found.
    func keptLines(_ path: String) -> [String] {
        (FileManager.default.subpaths(atPath: path + "/lost+found") ?? []).filter { $0.contains("journal.jsonl-line-at-") }
    }

    func damages(_ report: CheckReport) -> [JournalLineDamage] {
        report.problems.compactMap { if case .damagedJournalLine(let damage) = $0 { damage } else { nil } }
    }

    @Test func damagedBytesInTheMiddleLoseNoLaterCommit() throws {
        let path = makeTemporaryDirectory("midjournal")
        do {
            let db = try makeDatabase(path)
            try db.modify(saving: [note("one", folder: nil, text: "first")])
            try db.modify(saving: [note("two", folder: nil, text: "second")])
            try db.modify(saving: [note("three", folder: nil, text: "third")])
            var one = try db.record(for: RecordID(recordName: "one"))
            one["text"] = "first, edited"
            try db.modify(saving: [one])
            try db.close()
        }
        var lines = try journalLines(path)
        #expect(lines.count == 5)
        // Garbage over the middle of the second commit's line (newline kept).
        var bytes = Array(lines[2].utf8)
        for i in (bytes.count / 3)..<(bytes.count / 3 + 12) { bytes[i] = 0x7F }
        lines[2] = String(decoding: bytes, as: UTF8.self)
        try writeJournal(path, lines)

        let db = try makeDatabase(path)
        #expect(try db.record(for: RecordID(recordName: "two"))["text"] == "second")
        #expect(try db.record(for: RecordID(recordName: "three"))["text"] == "third")
        #expect(try db.record(for: RecordID(recordName: "one"))["text"] == "first, edited")
        #expect(keptLines(path).count == 1)
        #expect(db.recentProblems.contains { $0.contains("journal line at byte") && $0.contains("restored from their record files: two") })
        let report = try db.check()
        #expect(damages(report).map(\.restored) == [[RecordID(recordName: "two")]])
        #expect(report.problems.count == 1)
        // The line is replaced for good: the next open finds nothing to set aside.
        let again = try makeDatabase(path)
        #expect(again.recordCount == 3)
        #expect(try again.check().problems.isEmpty)
        #expect(keptLines(path).count == 1)
        try again.modify(saving: [note("four", folder: nil)])
        #expect(try makeDatabase(path).recordCount == 4)
    }

    @Test func aValueTheStoreCannotReadBackCostsOnlyThatLine() throws {
        let path = makeTemporaryDirectory("badvalue")
        let hash: String
        do {
            let db = try makeDatabase(path)
            try db.modify(saving: [note("kept", folder: nil, text: "v1")])
            var kept = try db.record(for: RecordID(recordName: "kept"))
            let asset = try db.makeAsset(Data("attached".utf8))
            hash = asset.sha256
            kept["content"] = .asset(asset)
            var new = note("new", folder: nil, text: "only here")
            new["content"] = .asset(asset)
            try db.modify(saving: [kept, new])
            var stamped = note("stamped", folder: nil, text: "dated")
            stamped["when"] = .date(Date(timeIntervalSince1970: 1000))
            try db.modify(saving: [stamped])
            try db.modify(saving: [note("after", folder: nil, text: "later")])
            try db.close()
        }
        var lines = try journalLines(path)
        // Line 2: an asset hash that is not 64 hex digits, in the line and in both record files.
        lines[2] = lines[2].replacingOccurrences(of: hash, with: "not-a-hash")
        for name in ["kept", "new"] {
            let file = path + "/" + RecordFileName.relativePath(for: name)
            let text = try String(contentsOfFile: file, encoding: .utf8).replacingOccurrences(of: hash, with: "not-a-hash")
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        }
        // Line 3: a date field "Infinity" in the line only (its record file is intact).
        lines[3] = lines[3].replacingOccurrences(of: #""value":1000"#, with: #""value":"Infinity""#)
        #expect(lines[3].contains("Infinity"))
        try writeJournal(path, lines)

        let db = try makeDatabase(path)
        // The later line applies; a record whose file is readable is restored from it.
        #expect(try db.record(for: RecordID(recordName: "after"))["text"] == "later")
        #expect(try db.record(for: RecordID(recordName: "stamped"))["when"] == .date(Date(timeIntervalSince1970: 1000)))
        // The earlier version stays; a record whose only version was in the line is lost.
        #expect(try db.record(for: RecordID(recordName: "kept"))["text"] == "v1")
        #expect(try db.record(for: RecordID(recordName: "kept"))["content"] == nil)
        #expect(db.metadata(for: RecordID(recordName: "new")) == nil)
        #expect(keptLines(path).count == 2)
        let found = damages(try db.check())
        #expect(found.count == 2)
        let lost = found.flatMap(\.lost)
        #expect(Set(lost.map(\.recordID.recordName)) == ["kept", "new"])
        #expect(lost.first { $0.recordID.recordName == "new" }?.reason.contains("asset hash") == true)
        #expect(found.first?.reason.contains("asset hash") == true)
        #expect(found.last?.restored == [RecordID(recordName: "stamped")])
        // fsck --repair reports them once; then only the damaged file of "new" is left for it.
        let repaired = try db.check(repair: true)
        #expect(repaired.unrepaired.contains { $0.hasPrefix("record new: its only version was in the line") })
        #expect(damages(try db.check()).isEmpty)
        #expect(try db.check().problems.isEmpty)
    }
}

import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

/// Versions kept as deltas of their newer neighbour (`VersionDelta`, `VersionCompaction`): every
/// version reads back byte for byte, a delete of a base (a prune, a sync) makes its deltas whole in
/// the same commit, and a damaged or hostile chain is an error, never a crash.
@Suite struct VersionDeltaTests {
    private let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    /// Nothing deleted by age or budget: compaction alone.
    private let keepAll = HistorySettings(interval: 0, budgetFraction: 1)

    private func database() throws -> RecordDatabase {
        let path = makeTemporaryDirectory("notesfs-delta")
        let database = try RecordDatabase(path: path, backgroundThread: false)
        VersionHistory.install(on: database, settings: HistorySettings(interval: 0))
        return database
    }

    /// Saves each text in turn (a version of each one replaced); returns the note and the texts
    /// its versions must hold, oldest first.
    private func edits(_ texts: [String], in database: RecordDatabase) throws -> (Record, [String]) {
        var record = Note(title: "N", text: "").record
        for (i, text) in texts.enumerated() {
            record["text"] = .string(text)
            record.modificationDate = t0 + Double(i) * 60
            record = try database.modify(saving: [record]).savedRecords.first { $0.recordType == Note.recordType }!
        }
        return (record, Array(texts.dropLast()))  // the first save made the note: no version
    }

    private func readBack(_ note: Record, in database: RecordDatabase) throws -> [String] {
        try VersionHistory.versions(ofNoteNamed: note.recordID.recordName, in: database).map {
            try VersionHistory.fullVersion($0.recordID, in: database).text ?? "<none>"
        }
    }

    /// Random texts and edits (multi-byte scalars at the cuts, combining marks, emoji): a delta
    /// applied to its base gives the text back, and its middle is text.
    @Test func aDeltaMakesItsTextBack() {
        var random = SystemRandomNumberGenerator()
        let pieces = ["a", "é", "e\u{301}", "😀", "👩‍👩‍👧", "日本", "\n", " ", "ß", "\u{0}", "line\n"]
        for _ in 0..<2_000 {
            let base = (0..<Int.random(in: 0..<30, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            var text = Array(base)
            for _ in 0..<Int.random(in: 0..<4, using: &random) {
                let at = Int.random(in: 0...text.count, using: &random)
                if Bool.random(using: &random) || text.isEmpty {
                    text.insert(contentsOf: pieces.randomElement(using: &random)!, at: at)
                } else {
                    text.remove(at: min(at, text.count - 1))
                }
            }
            let edited = String(text)
            let delta = VersionDelta(text: edited, baseText: base, base: "b")
            #expect(delta.apply(to: base) == edited, "\(base.debugDescription) -> \(edited.debugDescription)")
        }
    }

    @Test func compactionKeepsEveryVersionByteForByte() throws {
        let database = try database()
        var texts: [String] = []
        var text = "# Plan\n\n"
        for day in 0..<40 {
            text += "day \(day): a line about crème brûlée and 日本語 😀\n"
            if day % 7 == 3 { text = text.replacingOccurrences(of: "day \(day - 2):", with: "DAY \(day - 2) (edited):") }
            texts.append(text)
        }
        texts.append(String(repeating: "rewritten from scratch\n", count: 3))  // not worth a delta of its neighbour
        texts.append(texts[30])
        let (note, expected) = try edits(texts, in: database)
        let before = VersionRetention.plan(in: database, settings: keepAll).versionBytesBefore
        let plan = try VersionRetention.prune(in: database, settings: keepAll, now: t0 + 86_400)
        #expect(plan.deleting.isEmpty)
        #expect(plan.compacted > 30, "\(plan)")
        let versions = VersionHistory.versions(ofNoteNamed: note.recordID.recordName, in: database)
        #expect(versions.last?.isDelta == false)  // the newest keeps its text
        #expect(try readBack(note, in: database) == expected)
        let after = VersionRetention.plan(in: database, settings: keepAll).versionBytesBefore
        #expect(after * 5 < before, "\(before) -> \(after) bytes")
        // A second run finds nothing to do; sizes are the full sizes still.
        #expect(try VersionRetention.prune(in: database, settings: keepAll, now: t0 + 86_400).compacted == 0)
        #expect(versions.map(\.size) == expected.map { Int64($0.utf8.count) })
    }

    /// A prune (or another machine's, through a sync) deletes the version others are kept as
    /// deltas of: they get their whole text in the same commit and still read back.
    @Test(arguments: ["prune", "sync"]) func deletingABaseMakesItsDeltasWhole(reason: String) throws {
        let database = try database()
        let header = String(repeating: "a paragraph that every version shares\n", count: 20)
        let texts = (1...12).map { n in header + (1...n).map { "line \($0) of the note\n" }.joined() }
        let (note, expected) = try edits(texts, in: database)
        try VersionRetention.prune(in: database, settings: keepAll, now: t0)
        let versions = VersionHistory.versions(ofNoteNamed: note.recordID.recordName, in: database)
        #expect(versions.filter(\.isDelta).count == versions.count - 1)
        // Delete every other version: each deleted one is the base of the one before it.
        let doomed = versions.enumerated().filter { $0.offset % 2 == 1 }.map(\.element.recordID)
        try database.modify(deleting: doomed, reason: ModifyReason(reason))
        let left = VersionHistory.versions(ofNoteNamed: note.recordID.recordName, in: database)
        #expect(left.count == versions.count - doomed.count)
        #expect(left.allSatisfy { !$0.isDelta })
        let kept = Set(left.map(\.recordID))
        #expect(try readBack(note, in: database) == zip(versions, expected).filter { kept.contains($0.0.recordID) }.map(\.1))
        // And compaction makes them deltas again, still reading back.
        #expect(try VersionRetention.prune(in: database, settings: keepAll, now: t0).compacted > 0)
        #expect(try readBack(note, in: database) == zip(versions, expected).filter { kept.contains($0.0.recordID) }.map(\.1))
    }

    /// A prune after every edit (as a mount's hourly one between daily edits): each run makes the
    /// last newest version a delta, which lengthens every chain below it; chains stay within the
    /// limit and every version reads back.
    @Test func compactingAfterEveryEditKeepsChainsShort() throws {
        let database = try database()
        var record = Note(title: "N", text: "").record
        var expected: [String] = []
        var text = String(repeating: "a paragraph every version shares\n", count: 20)
        for day in 0..<80 {
            text += "day \(day)\n"
            record["text"] = .string(text)
            record.modificationDate = t0 + Double(day) * 86_400
            record = try database.modify(saving: [record]).savedRecords.first { $0.recordType == Note.recordType }!
            expected.append(text)
            try VersionRetention.prune(in: database, settings: keepAll, now: t0 + Double(day) * 86_400)
        }
        let versions = VersionHistory.versions(ofNoteNamed: record.recordID.recordName, in: database)
        #expect(versions.count == 79)
        #expect(versions.filter(\.isDelta).count > 70)
        #expect(try readBack(record, in: database) == Array(expected.dropLast()))
    }

    /// A commit that saves a version as a delta of a base it deletes (a sync page whose merge kept
    /// this machine's delta while the other machine pruned the base), or of a base that is not
    /// here at all: the version is saved whole, from the base before the commit or from this
    /// machine's own copy.
    @Test func aSavedDeltaWhoseBaseIsGoneIsSavedWhole() throws {
        let database = try database()
        let header = String(repeating: "a paragraph every version shares\n", count: 20)
        let (note, texts) = try edits((1...4).map { n in header + (1...n).map { "line \($0)\n" }.joined() }, in: database)
        let versions = VersionHistory.versions(ofNoteNamed: note.recordID.recordName, in: database)  // 3, whole
        func asDelta(_ i: Int, of base: String, baseText: String) throws -> Record {
            let stored = try database.record(for: versions[i].recordID)
            return VersionDelta(text: texts[i], baseText: baseText, base: base).store(in: stored)
        }
        // Version 0 as a delta of version 1, saved by the commit that deletes version 1.
        let first = try asDelta(0, of: versions[1].recordID.recordName, baseText: texts[1])
        try database.modify(saving: [first], deleting: [versions[1].recordID], reason: .sync)
        // Version 2 as a delta of a version this machine never had.
        let second = try asDelta(2, of: "never-here", baseText: texts[1])
        try database.modify(saving: [second], reason: .sync)
        for i in [0, 2] {
            let version = try VersionHistory.fullVersion(versions[i].recordID, in: database)
            #expect(!version.isDelta && version.text == texts[i])
        }
    }

    /// Hostile or damaged deltas (a missing base, a cycle, a range past the base, a base of another
    /// note, a chain too long): reading fails with an error naming the version.
    @Test func aBrokenChainIsAnError() throws {
        let database = try database()
        var whole = Version(of: Note(title: "N", text: "base text\n", recordID: RecordID(recordName: "n")).record, kind: .edit).record
        whole["date"] = .date(t0)
        var other = Version(of: Note(title: "O", text: "other\n", recordID: RecordID(recordName: "o")).record, kind: .edit).record
        other["date"] = .date(t0)
        func delta(_ name: String, base: String, prefix: Int64 = 0, suffix: Int64 = 0, note: String = "n") -> Record {
            var record = Version(
                of: Note(title: "N", text: "", recordID: RecordID(recordName: note)).record, kind: .edit,
                recordID: RecordID(recordName: name)
            ).record
            record["text"] = nil
            record["deltaBase"] = .string(base)
            record["deltaPrefix"] = .int64(prefix)
            record["deltaSuffix"] = .int64(suffix)
            record["deltaText"] = .string("x")
            return record
        }
        let cases = [
            delta("missing", base: "nowhere"),
            delta("cycle-a", base: "cycle-b"), delta("cycle-b", base: "cycle-a"),
            delta("past", base: whole.recordID.recordName, prefix: 5, suffix: 6),
            delta("negative", base: whole.recordID.recordName, prefix: -1),
            delta("foreign", base: other.recordID.recordName),
        ]
        var chain = [delta("chain-0", base: whole.recordID.recordName)]
        for i in 1...40 { chain.append(delta("chain-\(i)", base: "chain-\(i - 1)")) }
        try database.modify(saving: [whole, other] + cases + chain, reason: .prune)
        for name in ["missing", "cycle-a", "cycle-b", "past", "negative", "foreign", "chain-40"] {
            #expect(throws: NotesError.self, "\(name)") { try VersionHistory.fullVersion(RecordID(recordName: name), in: database) }
        }
        // The start of the chain is fine: "x" then nothing of the base.
        #expect(try VersionHistory.fullVersion(RecordID(recordName: "chain-0"), in: database).text == "x")
        // Compaction and a prune walk past them without failing.
        _ = try VersionRetention.prune(in: database, settings: keepAll, now: t0)
    }
}

import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@Suite struct VersionRetentionTests {
    private func makeDatabase() throws -> RecordDatabase {
        let path = makeTemporaryDirectory("notesfs-retention")
        let database = try RecordDatabase(path: path, backgroundThread: false)
        VersionHistory.install(on: database, settings: HistorySettings(interval: 0))  // a version per save
        return database
    }

    /// Saves `count` edits of a new note, `step` seconds apart from `start` (dates injected).
    private func edits(_ database: RecordDatabase, from start: Date, step: TimeInterval, count: Int, text: (Int) -> String) throws
        -> Record
    {
        var record = Note(title: "N", text: "").record
        for i in 0...count {
            record["text"] = .string(text(i))
            record.modificationDate = start + Double(i) * step
            record = try database.modify(saving: [record]).savedRecords[0]
        }
        return record
    }

    @Test func everyVersionForAWeekThenOneADayThenOneAWeek() throws {
        let database = try makeDatabase()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let day: TimeInterval = 86_400
        // Six saves a day (every 4 hours) for 200 days, ending now.
        let note = try edits(database, from: now - 200 * day, step: 4 * 3600, count: 6 * 200) { "state \($0)\n" }
        let before = VersionHistory.versions(ofNoteNamed: note.recordID.recordName, in: database)
        #expect(before.count == 1200)
        let plan = try VersionRetention.prune(in: database, settings: HistorySettings(interval: 0, budgetFraction: 1), now: now)
        let after = VersionHistory.versions(ofNoteNamed: note.recordID.recordName, in: database)
        #expect(plan.deleting.count == before.count - after.count)
        let ages = after.map { now.timeIntervalSince($0.date) }
        // Every version of the last 7 days; one a day until 90 days; one a week beyond.
        #expect(ages.filter { $0 < 7 * day }.count == before.filter { now.timeIntervalSince($0.date) < 7 * day }.count)
        #expect(ages.filter { $0 < 7 * day }.count == 41)
        let daily = ages.filter { $0 >= 7 * day && $0 < 90 * day }.map { Int(floor((now - $0).timeIntervalSince1970 / day)) }
        #expect(Set(daily).count == daily.count && (82...84).contains(daily.count))
        let weekly = ages.filter { $0 >= 90 * day }.map { Int(floor((now - $0).timeIntervalSince1970 / (7 * day))) }
        #expect(Set(weekly).count == weekly.count && (15...17).contains(weekly.count))
        // Pruning again deletes nothing.
        #expect(
            try VersionRetention.prune(in: database, settings: HistorySettings(interval: 0, budgetFraction: 1), now: now).deleting.isEmpty)
    }

    /// Over the budget (a floor of 0 here), the oldest versions go first, but never the last
    /// `keepLast` of a note nor a deleted note's last version within the retention window.
    @Test func theBudgetTakesTheOldestButNeverWhatRetentionKeeps() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func setUp() throws -> (RecordDatabase, Record) {
            let database = try makeDatabase()
            // 20 versions of 1,000 bytes, one a day (none thinned), the newest a day old.
            let note = try edits(database, from: now - 20 * 86_400, step: 86_400, count: 20) {
                String(repeating: Character(String($0 % 10)), count: 1000)
            }
            var gone = Note(title: "Gone", text: String(repeating: "g", count: 1000)).record
            gone.modificationDate = now - 100_000
            gone = try database.modify(saving: [gone]).savedRecords[0]
            try database.modify(deleting: [gone.recordID])
            return (database, note)
        }
        var settings = HistorySettings(interval: 0, budgetFraction: 0.2)
        settings.floorBytes = 0
        let (database, note) = try setUp()
        let plan = try VersionRetention.prune(in: database, settings: settings, now: now)
        #expect(plan.versionBytesBefore == 21_000)
        let ages = VersionHistory.versions(ofNoteNamed: note.recordID.recordName, in: database).map { now.timeIntervalSince($0.date) }
        #expect(ages == (1...10).reversed().map { Double($0 * 86_400) }, "the newest 10 stay, over the budget too")
        #expect(VersionHistory.deletedNotes(in: database).map(\.title) == ["Gone"])
        #expect(plan.versionBytesAfter == 11_000)
        // Fewer kept by count, a larger budget: the oldest go first until it fits (9,000 bytes
        // of versions is 90% of 10,000), never those of the last 7 days.
        settings.keepLast = 3
        settings.budgetFraction = 0.9
        let (roomy, kept) = try setUp()
        try VersionRetention.prune(in: roomy, settings: settings, now: now)
        let dates = VersionHistory.versions(ofNoteNamed: kept.recordID.recordName, in: roomy).map { now.timeIntervalSince($0.date) }
        #expect(dates == (1...8).reversed().map { Double($0 * 86_400) }, "\(dates)")
        #expect(VersionHistory.deletedNotes(in: roomy).count == 1)
        // Under the floor (64 MiB by default) nothing is pruned for space.
        let (small, smallNote) = try setUp()
        var floored = settings
        floored.floorBytes = HistorySettings().floorBytes
        #expect(try VersionRetention.prune(in: small, settings: floored, now: now).deleting.isEmpty)
        #expect(VersionHistory.versions(ofNoteNamed: smallNote.recordID.recordName, in: small).count == 20)
    }

    /// 100 quick edits in a small database: nothing is pruned for space (under the floor, and
    /// all within the last 7 days), a restore's version included.
    @Test func aSmallDatabaseKeepsEveryRecentVersion() throws {
        let database = try makeDatabase()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let note = try edits(database, from: now - 100, step: 1, count: 100) { "edit \($0)\n" }
        let versions = VersionHistory.versions(ofNoteNamed: note.recordID.recordName, in: database)
        try VersionHistory.restore(versions[3], in: database)
        let before = VersionHistory.versions(ofNoteNamed: note.recordID.recordName, in: database).count
        let plan = try VersionRetention.prune(in: database, settings: HistorySettings(interval: 0), now: now)
        #expect(plan.deleting.isEmpty)
        #expect(VersionHistory.versions(ofNoteNamed: note.recordID.recordName, in: database).count == before)
    }

    /// A folder of chapters written long ago and deleted now: every chapter can still be undeleted
    /// after a prune (a delete's version is kept for the retention window, whatever the budget).
    @Test func deletedChaptersSurviveAPrune() throws {
        let database = try makeDatabase()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let thesis = try database.modify(saving: [Folder(name: "Thesis").record]).savedRecords[0]
        var chapters: [Record] = []
        for i in 1...10 {
            var chapter = Note(title: "ch\(i)", text: String(repeating: "chapter \(i) ", count: 500), folder: thesis.recordID).record
            chapter.modificationDate = now - 200 * 86_400
            chapters.append(chapter)
        }
        try database.modify(saving: chapters)
        try database.modify(deleting: [thesis.recordID])
        #expect(VersionHistory.deletedNotes(in: database).count == 10)
        try VersionRetention.prune(in: database, settings: HistorySettings(), now: now + 3600)
        #expect(VersionHistory.deletedNotes(in: database).count == 10)
    }

    /// A version whose `size` lies (Int64.max, from a hostile server) counts the bytes it holds:
    /// it makes no prune delete what retention keeps.
    @Test func aLyingSizeDeletesNothing() throws {
        let database = try makeDatabase()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let note = try edits(database, from: now - 20_000, step: 1000, count: 20) { "state \($0)\n" }
        var forged = Version(of: Note(title: "N", text: "x", recordID: note.recordID).record, kind: .edit).record
        forged["size"] = .int64(Int64.max)
        forged["date"] = .date(now - 10)
        try database.modify(saving: [forged])
        let before = VersionHistory.versions(ofNoteNamed: note.recordID.recordName, in: database).count
        let plan = try VersionRetention.prune(in: database, settings: HistorySettings(), now: now)
        #expect(plan.deleting.isEmpty)
        #expect(plan.versionBytesBefore < 1_000)
        #expect(VersionHistory.versions(ofNoteNamed: note.recordID.recordName, in: database).count == before)
    }

    /// Sizes a hostile server may send (`Int64.max`, negative) count within bounds: a plan over
    /// them neither traps nor deletes what the budget keeps by their lie.
    @Test func hostileSizesDoNotOverflow() throws {
        let database = try makeDatabase()
        var records: [Record] = []
        for (i, size) in [Int64.max, Int64.max, Int64.min, -1].enumerated() {
            var version = Version(of: Note(title: "N", text: "x", recordID: RecordID(recordName: "n\(i)")).record, kind: .delete).record
            version["size"] = .int64(size)
            version["date"] = .date(Date())
            records.append(version)
        }
        try database.modify(saving: records)
        let plan = VersionRetention.plan(in: database, settings: HistorySettings())
        #expect(plan.versionBytesBefore == 4, "the bytes they hold (one each), not what their size says")
    }
}

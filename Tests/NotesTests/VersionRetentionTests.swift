import Foundation
import Notes
import RecordStore
import Testing

@Suite struct VersionRetentionTests {
    private func makeDatabase() throws -> RecordDatabase {
        var template = Array("/tmp/notesfs-retention-XXXXXX".utf8CString)
        let path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
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

    @Test func theBudgetTakesTheOldestButKeepsEachNotesNewest() throws {
        let database = try makeDatabase()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        // 20 versions of 1,000 bytes within the last day: all within "keep every version".
        let note = try edits(database, from: now - 20_000, step: 1000, count: 20) {
            String(repeating: Character(String($0 % 10)), count: 1000)
        }
        // A deleted note: its last version goes after the live note's older ones (it is older).
        var gone = Note(title: "Gone", text: String(repeating: "g", count: 1000)).record
        gone.modificationDate = now - 100_000
        gone = try database.modify(saving: [gone]).savedRecords[0]
        try database.modify(deleting: [gone.recordID])
        let settings = HistorySettings(interval: 0, budgetFraction: 0.2)
        let plan = try VersionRetention.prune(in: database, settings: settings, now: now)
        #expect(plan.versionBytesBefore == 21_000)
        // Live 1,000 bytes: versions may keep at most 20% of live + versions, so 250 bytes; the
        // budget is a bound: the live note's newest version goes too (last). The deleted note's goes.
        #expect(plan.versionBytesAfter == 0)
        #expect(VersionHistory.versions(ofNoteNamed: note.recordID.recordName, in: database).isEmpty)
        #expect(VersionHistory.deletedNotes(in: database).isEmpty)
        // With room for one, the newest of the live note's versions is the one kept.
        let one = try makeDatabase()
        let kept1 = try edits(one, from: now - 20_000, step: 1000, count: 20) {
            String(repeating: Character(String($0 % 10)), count: 1000)
        }
        try VersionRetention.prune(in: one, settings: HistorySettings(interval: 0, budgetFraction: 0.5), now: now)
        #expect(VersionHistory.versions(ofNoteNamed: kept1.recordID.recordName, in: one).map { now.timeIntervalSince($0.date) } == [1000])
        // With 50%, the deleted note's last version (1,000 bytes, the oldest) still goes first.
        let other = try makeDatabase()
        _ = try edits(other, from: now - 20_000, step: 1000, count: 2) { String(repeating: "x", count: 1000 + $0) }
        var gone2 = Note(title: "Gone", text: String(repeating: "g", count: 1000)).record
        gone2.modificationDate = now - 100_000
        gone2 = try other.modify(saving: [gone2]).savedRecords[0]
        try other.modify(deleting: [gone2.recordID])
        try VersionRetention.prune(in: other, settings: HistorySettings(interval: 0, budgetFraction: 0.5), now: now)
        #expect(VersionHistory.deletedNotes(in: other).isEmpty)
        // With a larger budget the newest go last: the oldest are deleted first.
        let roomy = try makeDatabase()
        let kept = try edits(roomy, from: now - 20_000, step: 1000, count: 20) {
            String(repeating: Character(String($0 % 10)), count: 1000)
        }
        try VersionRetention.prune(in: roomy, settings: HistorySettings(interval: 0, budgetFraction: 0.9), now: now)
        let dates = VersionHistory.versions(ofNoteNamed: kept.recordID.recordName, in: roomy).map { now.timeIntervalSince($0.date) }
        #expect(dates == dates.sorted(by: >) && dates.count < 20 && dates.last == 1000 && dates.first! <= 10_000)
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
        #expect(plan.versionBytesBefore == 2 * VersionRetention.sizeLimit)
    }
}

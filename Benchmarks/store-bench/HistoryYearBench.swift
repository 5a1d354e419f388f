import Foundation
import Notes
import RecordStore

/// `store-bench history-year DB [NOTES] [DAYS]`: a year (DAYS, default 365) of daily edits of NOTES
/// notes (default 10,000; 1-4 KB each, a line appended each day), with retention run at the end of
/// each simulated day as the mount runs it. Prints how the versions' share of the database moves
/// against the budget (20% by default) and how far back each note's history reaches at the end.
///
/// Time is simulated: each day's edit keeps the version it replaces (a day apart, so the 10-minute
/// coalescing never joins two) as ``VersionPolicy`` would, with that day's date, and retention is
/// given the day's end as its "now". The records are real: every save and prune is a store modify.
func historyYearBench(path: String, notes count: Int, days: Int) throws {
    let db = try RecordDatabase(path: path, backgroundThread: false)
    db.indexField("note", ofType: Version.recordType)
    let settings = HistorySettings.fromEnvironment()  // NOTESFS_HISTORY_BUDGET changes the budget
    let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z
    let ids = (0..<count).map { RecordID(recordName: "note-\($0)") }
    var texts = (0..<count).map { body($0) }
    for batch in stride(from: 0, to: count, by: 500) {
        try db.modify(
            saving: (batch..<min(count, batch + 500)).map { Note(title: "Note \($0)", text: texts[$0], recordID: ids[$0]).record })
    }
    var worstShare = 0.0
    var worstDay = 0
    var pruneSeconds: [Double] = []
    let clock = now()
    for day in 0..<days {
        let dayStart = start.addingTimeInterval(Double(day) * 86_400)
        for batch in stride(from: 0, to: count, by: 500) {
            var records: [Record] = []
            for i in batch..<min(count, batch + 500) {
                var replaced = Note(title: "Note \(i)", text: texts[i], recordID: ids[i]).record
                replaced.modificationDate = dayStart.addingTimeInterval(-86_400 + Double(i % 3600))
                var version = Version(of: replaced, kind: .edit).record
                version["date"] = .date(replaced.modificationDate!)
                texts[i] += "day \(day + 1): one more line of notes\n"
                records.append(version)
                records.append(Note(title: "Note \(i)", text: texts[i], recordID: ids[i]).record)
            }
            try db.modify(saving: records, savePolicy: .allKeys)
        }
        let pruneStart = now()
        let plan = try VersionRetention.prune(in: db, settings: settings, now: dayStart.addingTimeInterval(86_399))
        pruneSeconds.append(now() - pruneStart)
        let share = Double(plan.versionBytesAfter) / Double(max(1, plan.liveBytes + plan.versionBytesAfter))
        if share > worstShare { (worstShare, worstDay) = (share, day + 1) }
        if (day + 1) % 30 == 0 || day + 1 == days {
            report(
                "day \(day + 1)",
                String(
                    format: "versions %d, %.1f MB of %.1f MB notes (%.1f%% of the database), budget %.1f MB, pruned %d",
                    db.metadata(ofType: Version.recordType).count, Double(plan.versionBytesAfter) / 1e6, Double(plan.liveBytes) / 1e6,
                    share * 100, Double(plan.budget) / 1e6, plan.deleting.count))
        }
    }
    let end = start.addingTimeInterval(Double(days) * 86_400)
    var reach: [Double] = []
    var perNote: [Int] = []
    for id in ids {
        let versions = VersionHistory.versions(ofNoteNamed: id.recordName, in: db)
        perNote.append(versions.count)
        reach.append(versions.first.map { end.timeIntervalSince($0.date) / 86_400 } ?? 0)
    }
    report(
        "a year of daily edits, \(count) notes", String(format: "largest share %.1f%% (day %d)", worstShare * 100, worstDay),
        target: String(format: "≤ %.0f%% (the budget)", settings.budgetFraction * 100))
    report(
        "versions per note at the end",
        "median \(Int(median(perNote.map(Double.init)))), min \(perNote.min() ?? 0), max \(perNote.max() ?? 0)")
    report(
        "history reaches back (days)", String(format: "median %.0f, min %.0f, max %.0f", median(reach), reach.min() ?? 0, reach.max() ?? 0))
    report(
        "retention, one run a day",
        String(format: "median %.0f ms, max %.0f ms", median(pruneSeconds) * 1000, (pruneSeconds.max() ?? 0) * 1000))
    report("simulation", String(format: "%.0f s", now() - clock))
    try db.close()
}

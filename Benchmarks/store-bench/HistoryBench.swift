import Foundation
import Notes
import RecordStore

/// `store-bench history DB`: what note history costs a save, and `note log`'s read at 1,000
/// versions. DB is a new directory (1,000 notes of 1-4 KB are generated in it).
///
/// Saves are timed in rounds of 50 that alternate between no history, history that keeps a version
/// of every save (interval 0: the worst case) and the default 10-minute interval on notes saved a
/// moment ago (their saves are coalesced: no version), so that the machine's load falls alike on all three.
func historyBench(path: String) throws {
    let db = try RecordDatabase(path: path, backgroundThread: false)
    let notes = (0..<1000).map { Note(title: "Note \($0)", text: body($0), recordID: RecordID(recordName: "note-\($0)")) }
    try db.modify(saving: notes.map(\.record))
    db.indexField("note", ofType: Version.recordType)
    let policies: [(String, (any CommitHook)?)] = [
        ("no history", nil), ("history, a version every save", VersionPolicy(settings: HistorySettings(interval: 0))),
        ("history, 10-minute interval", VersionPolicy(settings: HistorySettings(interval: 600))),
    ]
    var times = Array(repeating: [Double](), count: policies.count)
    var cpu = Array(repeating: 0.0, count: policies.count)
    // Notes 900-949 were saved a moment ago with history on: their next saves are coalesced.
    db.setCommitHook(policies[2].1)
    for i in 900..<950 { _ = try editAndSave(db, RecordID(recordName: "note-\(i)"), " warm") }
    let versionsBefore = db.metadata(ofType: Version.recordType).count
    var next = 0
    for round in 0..<10 {
        for (p, policy) in policies.enumerated() {
            db.setCommitHook(policy.1)
            let cpuStart = cpuTime()
            for i in 0..<50 {
                let note = p == 2 ? 900 + i : next % 900
                times[p].append(try editAndSave(db, RecordID(recordName: "note-\(note)"), " r\(round)"))
                if p != 2 { next += 1 }
            }
            cpu[p] += cpuTime() - cpuStart
        }
    }
    for (p, policy) in policies.enumerated() {
        report(
            "save (1-4 KB note, 1,000 notes): \(policy.0)",
            String(
                format: "median %.3f ms, CPU %.3f ms/save (%d saves)", median(times[p]) * 1000, cpu[p] / Double(times[p].count) * 1000,
                times[p].count),
            target: p == 0 ? "" : "≤ 1.2x no history")
    }
    report("versions made by the timed saves", "\(db.metadata(ofType: Version.recordType).count - versionsBefore)")

    // One note with 1,000 versions: what `note log` reads.
    db.setCommitHook(VersionPolicy(settings: HistorySettings(interval: 0)))
    let id = RecordID(recordName: "note-0")
    let made = VersionHistory.versions(ofNoteNamed: id.recordName, in: db).count
    for _ in made..<max(made, 1000) { _ = try editAndSave(db, id, "\n") }  // each save changes the bytes: a version
    var reads: [Double] = []
    for _ in 0..<20 {
        let start = now()
        let versions = VersionHistory.versions(ofNoteNamed: id.recordName, in: db)
        reads.append(now() - start)
        precondition(versions.count >= 1000)
    }
    report(
        "versions of a note with 1,000 versions (note log's read)", String(format: "median %.2f ms", median(reads) * 1000),
        target: "≤ 100 ms")

    // Deltas: the same 1,000 versions (each the next plus a line) compacted, as a prune does.
    let versions = VersionHistory.versions(ofNoteNamed: id.recordName, in: db)
    func readAll() throws -> Double {
        let start = now()
        for version in versions {
            let full = try VersionHistory.fullVersion(version.recordID, in: db)
            precondition(full.text != nil)
        }
        return (now() - start) / Double(versions.count)
    }
    let wholeRead = try readAll()
    let roomy = HistorySettings(interval: 0, budgetFraction: 1)
    let bytesBefore = VersionRetention.plan(in: db, settings: roomy).versionBytesBefore
    let start = now()
    let result = try VersionCompaction.compact(in: db)
    let compactTime = now() - start
    let bytesAfter = VersionRetention.plan(in: db, settings: roomy).versionBytesBefore
    report(
        "compaction (every version: one note of \(versions.count), 1,000 of 1-2)",
        String(
            format: "%d made deltas in %.0f ms; versions' bytes %.2f MB -> %.2f MB", result.compacted, compactTime * 1000,
            Double(bytesBefore) / 1e6, Double(bytesAfter) / 1e6))
    let deltaRead = try readAll()
    report(
        "reading one version back (fullVersion)",
        String(format: "whole %.3f ms, as a delta %.3f ms (chains up to %d)", wholeRead * 1000, deltaRead * 1000, VersionDelta.maxDepth))
    try db.close()
}

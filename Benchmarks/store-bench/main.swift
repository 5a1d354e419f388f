// Record store benchmark (scripts/bench.sh store). Prints figures; asserts nothing.
//
//   store-bench generate DB NOTES FOLDERS   fill a database (1-4 KB notes), batched
//   store-bench open DB                     time to open, peak RSS of this process
//   store-bench checkpoint DB               fold the journal into index.jsonl (then `open` reads the snapshot alone)
//   store-bench save DB [SAVES]             the cost of one save (one note per modify) at this size
//   store-bench stall DB [RENAMES]          1 MiB notes saved until a checkpoint has started: the slowest
//                                           save beside the median, then the wait for the checkpoint
//                                           (RENAMES notes renamed first, through their metadata alone)
//   store-bench ops DB                      saves+sync/s, folder fetch, CONTAINS[c] query, cascade delete
//   store-bench history DB                  note history: a save with and without a version; a note's
//                                           versions read at 1,000 (HistoryBench.swift; DB: a new directory)
//   store-bench history-year DB [NOTES] [DAYS]
//                                           a year of daily edits of NOTES notes (10,000): the versions'
//                                           share against the budget (HistoryYearBench.swift; DB: new)
//   store-bench index DIR CORPUS           the text index's own work for each write of `scripts/bench.sh fs`'s
//                                           phases (IndexFloorBench.swift; DIR: new; CORPUS: the phases' bodies)
//   store-bench reads DB [ROUNDS] [fetch|contains]
//                                           folder fetch and CONTAINS[c] query only (changes nothing), ROUNDS
//                                           times; `fetch` or `contains` runs that one alone (for perf)
//
// Each figure is printed beside issue 9's target for it, where the issue names one.
import Foundation
@preconcurrency import Glibc
import Notes
import RecordStore

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// CPU seconds (user + system) this process has used: less disturbed by other work on the machine than wall time.
func cpuTime() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func peakRSSMegabytes() -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let kb = Double(line.split(separator: " ")[1]) ?? 0
        return kb / 1024
    }
    return 0
}

let words = ["alpha", "note", "linux", "swift", "record", "folder", "journal", "kernel", "markdown", "editor", "rsync", "grep"]

func body(_ i: Int) -> String {
    var generator = SplitMix(seed: UInt64(i))
    let target = 1024 + Int(generator.next() % 3072)
    var text = "# Note \(i)\n\n"
    while text.utf8.count < target {
        text += words[Int(generator.next() % UInt64(words.count))] + (generator.next() % 9 == 0 ? "\n" : " ")
    }
    if i % 997 == 0 { text += " Zanzibar" }
    return text
}

struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Prints "NAME  VALUE  target TARGET" in columns (a long name or value pushes the next column along).
func report(_ name: String, _ value: String, target: String = "") {
    func column(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + "  " : text.padding(toLength: width, withPad: " ", startingAt: 0)
    }
    print(column(name, 48) + (target.isEmpty ? value : column(value, 56) + "target " + target))
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// Up to `count` notes of the generated database that still exist (a cascade delete in an earlier
/// `ops` run removes a folder's notes).
func existingNotes(_ db: RecordDatabase, count: Int) -> [RecordID] {
    Array((0..<db.recordCount).lazy.map { RecordID(recordName: "note-\($0)") }.filter { db.metadata(for: $0) != nil }.prefix(count))
}

/// Appends `suffix` to a note's text and saves it in a modify of its own; returns the seconds the modify took.
func editAndSave(_ db: RecordDatabase, _ id: RecordID, _ suffix: String) throws -> Double {
    var note = try Note(record: try db.record(for: id))
    note.text += suffix
    let start = now()
    try db.modify(saving: [note.record])
    return now() - start
}

let args = CommandLine.arguments
guard args.count >= 3 else {
    print(
        "usage: store-bench generate DB NOTES FOLDERS | open DB | checkpoint DB | save DB [SAVES] | stall DB [RENAMES] | ops DB | reads DB [ROUNDS] [fetch|contains] | index DIR CORPUS"
    )
    exit(64)
}
let path = args[2]
do {
    switch args[1] {
    case "history":
        try historyBench(path: path)
    case "index" where args.count > 3:
        try indexFloorBench(path: path, corpus: args[3])
    case "history-year":
        try historyYearBench(
            path: path, notes: CommandLine.arguments.count > 3 ? Int(CommandLine.arguments[3]) ?? 10_000 : 10_000,
            days: CommandLine.arguments.count > 4 ? Int(CommandLine.arguments[4]) ?? 365 : 365)
    case "generate":
        let total = Int(args[3])!
        let folders = Int(args[4])!
        let db = try RecordDatabase(path: path)
        let start = now()
        let folderRecords = (0..<folders).map { Folder(name: "Folder \($0)", recordID: RecordID(recordName: "folder-\($0)")) }
        try db.modify(saving: folderRecords.map(\.record))
        var batch: [Record] = []
        for i in 0..<total {
            let note = Note(
                title: "Note \(i)", text: body(i), folder: folderRecords[i % folders].recordID, recordID: RecordID(recordName: "note-\(i)"))
            batch.append(note.record)
            if batch.count == 1000 || i == total - 1 {
                try db.modify(saving: batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        try db.close()
        let elapsed = now() - start
        report("generate \(total) notes (batches of 1000)", String(format: "%.2f s  (%.0f notes/s)", elapsed, Double(total) / elapsed))
    case "checkpoint":
        // Folds the journal into index.jsonl, so that a following `open` measures the snapshot alone.
        let db = try RecordDatabase(path: path, backgroundThread: false)
        let start = now()
        try db.checkpoint()
        report("checkpoint of \(db.recordCount) records", String(format: "%.3f s", now() - start))
    case "open":
        let start = now()
        let db = try RecordDatabase(path: path, backgroundThread: false)
        let elapsed = now() - start
        let million = db.recordCount >= 1_000_000
        report("open \(db.recordCount) records", String(format: "%.3f s", elapsed), target: million ? "< 3 s" : "")
        report("peak RSS after open", String(format: "%.1f MB", peakRSSMegabytes()), target: million ? "< 500 MB" : "≤ 150 MB")
    case "save":
        // One note per modify, each timed alone: the median is a save's own cost, the mean includes
        // the checkpoints that fall in the window (one every >= 4 MiB of journal, >= half the snapshot).
        let db = try RecordDatabase(path: path, backgroundThread: false)
        let saves = args.count > 3 ? Int(args[3])! : 2000
        let targets = existingNotes(db, count: 1000)
        var times: [Double] = []
        let start = now()
        for i in 0..<saves { times.append(try editAndSave(db, targets[i * 37 % targets.count], " edited")) }
        let elapsed = now() - start
        report(
            "save one note per modify (\(db.recordCount) records)",
            String(
                format: "median %.3f ms, mean %.3f ms, max %.1f ms (%.0f saves/s)", median(times) * 1000,
                elapsed / Double(saves) * 1000, times.max()! * 1000, Double(saves) / elapsed),
            target: "the same at 1,000,000 as at 1,000")
        // What the mean spreads over the saves: a checkpoint rewrites index.jsonl (the whole index),
        // once every max(4 MiB, half the snapshot) of journal.
        let checkpointStart = now()
        try db.checkpoint()
        report("one checkpoint (\(db.recordCount) records)", String(format: "%.3f s", now() - checkpointStart))
        try db.close()
    case "stall":
        // The save that takes the journal past max(4 MiB, half the snapshot) starts a checkpoint:
        // every save is timed, until the journal holds that much of 1 MiB notes (then they are deleted).
        let db = try RecordDatabase(path: path, backgroundThread: false)
        // Renamed through their metadata: their record files lag until the checkpoint rewrites them.
        let renames = args.count > 3 ? Int(args[3])! : 0
        for id in existingNotes(db, count: renames) {
            guard var record = db.metadata(for: id)?.record else { continue }
            record["title"] = .string("Renamed \(id.recordName)")
            try db.modify(saving: [record])
        }
        let snapshot = (try? FileManager.default.attributesOfItem(atPath: path + "/index.jsonl")[.size] as? Int) ?? 0
        let saves = max(4 << 20, snapshot / 2) / (1 << 20) + 2
        let folder = RecordID(recordName: "folder-0")
        let text = String(repeating: "stall ", count: (1 << 20) / 6)
        var times: [Double] = []
        var ids: [RecordID] = []
        for i in 0..<saves {
            let note = Note(title: "Stall \(i)", text: text, folder: folder, recordID: RecordID(recordName: "stall-\(i)"))
            let start = now()
            try db.modify(saving: [note.record])
            times.append(now() - start)
            ids.append(note.recordID)
        }
        report(
            "\(saves) saves of a 1 MiB note (\(db.recordCount) records, \(renames) renamed)",
            String(
                format: "median %.1f ms, slowest %.1f ms (save %d)", median(times) * 1000, times.max()! * 1000,
                times.firstIndex(of: times.max()!)!),
            target: "the same at 1,000,000 as at 1,000")
        try db.modify(deleting: ids)
        try db.close()
    case "ops":
        let db = try RecordDatabase(path: path, backgroundThread: false)
        let notes = NotesManager(database: db)
        let folders = (0..<100).map { RecordID(recordName: "folder-\($0)") }.filter { db.metadata(for: $0) != nil }
        let folderID = folders[0]
        let targets = existingNotes(db, count: 200)
        var start = now()
        let syncedSaves = targets.count
        for id in targets {
            _ = try editAndSave(db, id, " synced")
            try db.sync()
        }
        var elapsed = now() - start
        report(
            "save + sync() per note",
            String(format: "%.0f saves/s  (%.2f ms each)", Double(syncedSaves) / elapsed, elapsed / Double(syncedSaves) * 1000))
        // Folder fetch.
        let folder = try Folder(record: try db.record(for: folderID))
        var times: [Double] = []
        var count = 0
        for _ in 0..<15 {
            start = now()
            count = try await notes.fetchNotes(for: folder).count
            times.append(now() - start)
        }
        report("fetchNotes(for:) folder of \(count) (full notes)", String(format: "%.1f ms median", median(times) * 1000), target: "< 5 ms")
        times = []
        for _ in 0..<15 {
            start = now()
            count = db.referrers(to: folderID, key: "folder").count
            times.append(now() - start)
        }
        report("folder listing from metadata (\(count))", String(format: "%.2f ms median", median(times) * 1000))
        // Full-text query.
        start = now()
        let matches = try db.query(
            Query(recordType: "Note", predicate: try RecordStore.Predicate(format: "text CONTAINS[c] %@", "zanzibar"))
        ).records.count
        elapsed = now() - start
        report("text CONTAINS[c] over \(db.recordCount) records (\(matches) hits)", String(format: "%.3f s", elapsed), target: "< 300 ms")
        // Cascade delete of a folder with 1,000 notes.
        start = now()
        let deleted = try db.modify(deleting: [folders.last!]).deletedRecordIDs.count
        elapsed = now() - start
        report("cascade delete of a folder (\(deleted) records)", String(format: "%.1f ms", elapsed * 1000))
        report("peak RSS", String(format: "%.1f MB", peakRSSMegabytes()))
        try db.close()
    case "reads":
        // The read-only part of `ops`, repeated: for comparing builds (and profiling) on one database.
        let rounds = args.count > 3 ? Int(args[3]) ?? 1 : 1
        let only = args.count > 4 ? args[4] : nil
        guard only == nil || only == "fetch" || only == "contains" else {
            print("reads: the fifth argument is fetch or contains")
            exit(64)
        }
        let db = try RecordDatabase(path: path, backgroundThread: false)
        let notes = NotesManager(database: db)
        let folder = try Folder(record: try db.record(for: RecordID(recordName: "folder-0")))
        for _ in 0..<rounds {
            var times: [Double] = []
            var cpu: [Double] = []
            var count = 0
            for _ in 0..<(only == "contains" ? 0 : 15) {
                let (start, startCPU) = (now(), cpuTime())
                count = try await notes.fetchNotes(for: folder).count
                times.append(now() - start)
                cpu.append(cpuTime() - startCPU)
            }
            if only != "contains" {
                report(
                    "fetchNotes(for:) folder of \(count)",
                    String(format: "%.1f ms median (CPU %.1f ms)", median(times) * 1000, median(cpu) * 1000))
            }
            if only == "fetch" { continue }
            let (start, startCPU) = (now(), cpuTime())
            let predicate = try RecordStore.Predicate(format: "text CONTAINS[c] %@", "zanzibar")
            let matches = try db.query(Query(recordType: "Note", predicate: predicate)).records.count
            report(
                "text CONTAINS[c] query (\(matches) matches)", String(format: "%.3f s (CPU %.3f s)", now() - start, cpuTime() - startCPU))
        }
        report("peak RSS", String(format: "%.1f MB", peakRSSMegabytes()))
    default:
        print("unknown mode")
        exit(64)
    }
} catch {
    print("error: \(error)")
    exit(1)
}

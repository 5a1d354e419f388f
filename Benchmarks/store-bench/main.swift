// Record store benchmark (scripts/bench.sh store). Prints figures; asserts nothing.
//
//   store-bench generate DB NOTES FOLDERS   fill a database (1-4 KB notes), batched
//   store-bench open DB                     time to open, peak RSS of this process
//   store-bench ops DB                      saves/s, saves+sync/s, folder fetch, CONTAINS[c] query, cascade delete
//   store-bench reads DB [ROUNDS]           folder fetch and CONTAINS[c] query only (changes nothing), ROUNDS times
import Foundation
import Notes
import RecordStore

@preconcurrency import Glibc

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

func report(_ name: String, _ value: String) { print(name.padding(toLength: 44, withPad: " ", startingAt: 0) + value) }

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

let args = CommandLine.arguments
guard args.count >= 3 else {
    print("usage: store-bench generate DB NOTES FOLDERS | open DB | ops DB | reads DB [ROUNDS]")
    exit(64)
}
let path = args[2]
do {
    switch args[1] {
    case "generate":
        let total = Int(args[3])!, folders = Int(args[4])!
        let db = try RecordDatabase(path: path)
        let start = now()
        let folderRecords = (0..<folders).map { Folder(name: "Folder \($0)", recordID: RecordID(recordName: "folder-\($0)")) }
        try db.modify(saving: folderRecords.map(\.record))
        var batch: [Record] = []
        for i in 0..<total {
            let note = Note(title: "Note \(i)", text: body(i), folder: folderRecords[i % folders].recordID, recordID: RecordID(recordName: "note-\(i)"))
            batch.append(note.record)
            if batch.count == 1000 || i == total - 1 {
                try db.modify(saving: batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        try db.close()
        let elapsed = now() - start
        report("generate \(total) notes (batches of 1000)", String(format: "%.2f s  (%.0f notes/s)", elapsed, Double(total) / elapsed))
    case "open":
        let start = now()
        let db = try RecordDatabase(path: path, backgroundThread: false)
        let elapsed = now() - start
        report("open \(db.recordCount) records", String(format: "%.3f s", elapsed))
        report("peak RSS after open", String(format: "%.1f MB", peakRSSMegabytes()))
    case "ops":
        let db = try RecordDatabase(path: path, backgroundThread: false)
        let notes = NotesManager(database: db)
        let folders = (0..<100).map { RecordID(recordName: "folder-\($0)") }.filter { db.metadata(for: $0) != nil }
        let folderID = folders[0]
        // Saves, one note per modify.
        // Notes that exist (an earlier run's cascade delete removed a folder's notes).
        let existing = (0..<100_000).lazy.map { RecordID(recordName: "note-\($0)") }.filter { db.metadata(for: $0) != nil }
        let targets = Array(existing.prefix(3000))
        var start = now()
        let saves = 2000
        for i in 0..<saves {
            var note = try Note(record: try db.record(for: targets[i * 37 % 1000]))
            note.text += " edited"
            try db.modify(saving: [note.record])
        }
        var elapsed = now() - start
        report("save one note per modify", String(format: "%.0f saves/s  (%.3f ms each)", Double(saves) / elapsed, elapsed / Double(saves) * 1000))
        start = now()
        let syncedSaves = 200
        for i in 0..<syncedSaves {
            var note = try Note(record: try db.record(for: targets[1000 + i]))
            note.text += " synced"
            try db.modify(saving: [note.record])
            try db.sync()
        }
        elapsed = now() - start
        report("save + sync() per note", String(format: "%.0f saves/s  (%.2f ms each)", Double(syncedSaves) / elapsed, elapsed / Double(syncedSaves) * 1000))
        // Folder fetch.
        let folder = try Folder(record: try db.record(for: folderID))
        var times: [Double] = []
        var count = 0
        for _ in 0..<15 {
            start = now()
            count = try await notes.fetchNotes(for: folder).count
            times.append(now() - start)
        }
        report("fetchNotes(for:) folder of \(count)", String(format: "%.1f ms median", median(times) * 1000))
        times = []
        for _ in 0..<15 {
            start = now()
            count = db.referrers(to: folderID, key: "folder").count
            times.append(now() - start)
        }
        report("folder listing from metadata (\(count))", String(format: "%.2f ms median", median(times) * 1000))
        // Full-text query.
        start = now()
        let matches = try db.query(Query(recordType: "Note", predicate: try RecordStore.Predicate(format: "text CONTAINS[c] %@", "zanzibar"))).records.count
        elapsed = now() - start
        report("text CONTAINS[c] query (\(matches) matches)", String(format: "%.2f s", elapsed))
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
        let db = try RecordDatabase(path: path, backgroundThread: false)
        let notes = NotesManager(database: db)
        let folder = try Folder(record: try db.record(for: RecordID(recordName: "folder-0")))
        for _ in 0..<rounds {
            var times: [Double] = []
            var cpu: [Double] = []
            var count = 0
            for _ in 0..<15 {
                let (start, startCPU) = (now(), cpuTime())
                count = try await notes.fetchNotes(for: folder).count
                times.append(now() - start)
                cpu.append(cpuTime() - startCPU)
            }
            report(
                "fetchNotes(for:) folder of \(count)",
                String(format: "%.1f ms median (CPU %.1f ms)", median(times) * 1000, median(cpu) * 1000))
            let (start, startCPU) = (now(), cpuTime())
            let predicate = try RecordStore.Predicate(format: "text CONTAINS[c] %@", "zanzibar")
            let matches = try db.query(Query(recordType: "Note", predicate: predicate)).records.count
            report("text CONTAINS[c] query (\(matches) matches)", String(format: "%.3f s (CPU %.3f s)", now() - start, cpuTime() - startCPU))
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

import Foundation
import Index

/// `store-bench index DIR CORPUS`: the text index's own work for each write of `scripts/bench.sh
/// fs`'s phases, a part of the floor under those writes that a mount which keeps the index cannot
/// go below (`Benchmarks/fs/fs_table.py` adds it to passthrough_ll's CPU an operation).
///
/// CORPUS holds the bodies the phases write (files `0`, `1`, … from `Benchmarks/fs/corpus.py`).
/// The same writes go to a new index in DIR (``TextIndex``, the code the daemon's indexer runs),
/// in the phases' order and in transactions of 100, the most the indexer's catch-ups batch, so
/// that a transaction's own cost is shared as widely as it ever is. Prints one line per phase:
/// "PHASE COUNT CPU-µs-AN-OPERATION".
func indexFloorBench(path: String, corpus: String) throws {
    let count = try FileManager.default.contentsOfDirectory(atPath: corpus).count
    let bodies = try (0..<count).map { i in try String(contentsOfFile: corpus + "/\(i)", encoding: .utf8) }
    guard bodies.count >= 200 else {
        print("store-bench index: \(corpus) holds \(bodies.count) bodies; the phases need at least 200")
        exit(65)
    }
    let folders = 20
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    let index = try TextIndex(databasePath: path, create: true)
    func document(_ i: Int, title: String? = nil, folder: Int? = nil, body: String? = nil) -> IndexedDocument {
        let title = title ?? "note \(i)"
        return IndexedDocument(
            name: "note-\(i)", recordType: "Note", folder: "folder-\(folder ?? i % folders)", fileName: title + ".md",
            title: title, body: body ?? bodies[i], modificationDate: Date())
    }
    /// Runs `write` for each of `numbers` in transactions of 100; prints the CPU an operation.
    func phase(_ name: String, _ numbers: [Int], _ write: (IndexWriter, Int) throws(SQLiteError) -> Void) throws {
        let start = cpuTime()
        for batch in stride(from: 0, to: numbers.count, by: 100) {
            try index.update { (w) throws(SQLiteError) in
                for i in numbers[batch..<min(batch + 100, numbers.count)] { try write(w, i) }
            }
        }
        print(name, numbers.count, String(format: "%.1f", (cpuTime() - start) / Double(numbers.count) * 1e6))
    }
    let all = Array(bodies.indices)
    var titles: [Int: String] = [:]
    var homes: [Int: Int] = [:]
    var texts = bodies
    // Each note as the phases leave it (Benchmarks/fs/phases.py and operations.py).
    func current(_ i: Int) -> IndexedDocument { document(i, title: titles[i], folder: homes[i], body: texts[i]) }
    try phase("create", all) { (w, i) throws(SQLiteError) in try w.save(document(i)) }
    try phase("append", Array(stride(from: 0, to: all.count, by: 10))) { (w, i) throws(SQLiteError) in
        texts[i] += "\nappended line\n"
        try w.save(current(i))
    }
    try phase("rename-same", Array(stride(from: 5, to: all.count, by: 20))) { (w, i) throws(SQLiteError) in
        titles[i] = "renamed \(i)"
        try w.save(current(i))
    }
    try phase("rename-across", Array(stride(from: 15, to: all.count, by: 20))) { (w, i) throws(SQLiteError) in
        titles[i] = "renamed \(i)"
        homes[i] = (i % folders + 1) % folders
        try w.save(current(i))
    }
    try phase("editor-save", (0..<200).map { ($0 * 7) % all.count }) { (w, i) throws(SQLiteError) in
        texts[i] = bodies[i] + "\nsaved by an editor\n"
        try w.save(current(i))
    }
    try phase("unlink", all) { (w, i) throws(SQLiteError) in try w.delete("note-\(i)") }
}

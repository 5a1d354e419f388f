import Foundation
import TestSupport
import Testing

/// `import` commits in batches bounded by bytes, so that a tree of large notes imports whatever
/// their sum (one commit's journal line holds at most 128 MiB).
@Suite struct ImportBatchTests {
    @Test(.tags(.slow), .notInFastRuns) func manyLargeNotesImport() throws {
        let root = machinesDirectory + "/import-" + UUID().uuidString
        let tree = root + "/tree"
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let line = String(repeating: "a line of a large note ", count: 3) + "\n"
        let text = String(repeating: line, count: (4 << 20) / line.utf8.count)
        let count = 36  // 36 × 4 MiB: over what one commit may hold
        for n in 0..<count { try Data((text + "\(n)\n").utf8).write(to: URL(fileURLWithPath: tree + "/note \(n).md")) }
        let db = root + "/db"
        let run = try notesfs(db, ["import", tree])
        #expect(run.status == 0, "\(run.stderr)")
        let list = try notesfs(db, ["ls"])
        #expect(list.out.split(separator: "\n").filter { $0.contains("note ") }.count == count, "\(list.out.prefix(500))\(list.stderr)")
        let fsck = try notesfs(db, ["fsck"])
        #expect(fsck.status == 0, "\(fsck.out)\(fsck.stderr)")
    }
}

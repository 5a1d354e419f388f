import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// A child commits in a loop and is killed with SIGKILL at random moments; after every kill the
/// database opens, passes check(), and every modify the child reported as returned is there in full.
@Suite struct CrashTests {
    /// Runs `recordstore-stress arguments`, SIGKILLs it after a random number of microseconds in
    /// `delay`, and returns the modifies it reported as returned ("ok i"; complete lines only: the
    /// kill may cut the last one).
    func killedRun(_ arguments: [String], after delay: ClosedRange<UInt32>, _ generator: inout SystemRandomNumberGenerator) throws
        -> [Int]
    {
        let (child, pipe) = try launch("recordstore-stress", arguments)
        usleep(UInt32.random(in: delay, using: &generator))
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            .compactMap { $0.hasPrefix("ok ") ? Int($0.dropFirst(3)) : nil }
    }

    @Test(.tags(.slow), .notInFastRuns) func sigkillAtRandomMomentsLosesNoReturnedModify() throws {
        let path = makeTemporaryDirectory("crash")
        var generator = SystemRandomNumberGenerator()
        var lastReported = -1
        var round = 0
        var totalCommitted = 0
        while round < 40 {
            let prefix = "r\(round)"
            let reported = try killedRun(["commit", path, prefix, "100000"], after: 20_000...150_000, &generator)
            lastReported = reported.max() ?? -1
            totalCommitted += lastReported + 1

            let db = try makeDatabase(path)
            let report = try db.check()
            #expect(report.problems.isEmpty, "round \(round): \(report.problems)")
            // Every returned modify is present in full. Modify i deletes i-3's records and the child
            // may have finished one more modify than it reported, so the last two must be there.
            for i in max(0, lastReported - 1)...max(0, lastReported) where lastReported >= 0 {
                for part in ["a", "b", "c"] {
                    let record = try db.record(for: RecordID(recordName: "\(prefix)-\(i)-\(part)"))
                    #expect(record["i"] == .int64(Int64(i)))
                    #expect(record["text"] == .string(String(repeating: "\(part)\(i)-line with some words ", count: 3 + (i * 37) % 200)))
                }
            }
            // No modify is half applied: each i has all three parts or none.
            let items = db.queryMetadata(Query(recordType: "Item")).map(\.recordID.recordName).filter { $0.hasPrefix(prefix + "-") }
            var parts: [String: Int] = [:]
            for name in items { parts[String(name.dropLast(2)), default: 0] += 1 }
            #expect(parts.values.allSatisfy { $0 == 3 }, "round \(round): \(parts)")
            round += 1
        }
        #expect(totalCommitted > 40, "the child committed \(totalCommitted) modifies over \(round) kills")
    }

    /// Metadata-only saves (renames through partial records) under SIGKILL: the last returned
    /// rename is there after recovery, every text is whole, and fsck finds nothing; then, with
    /// the index snapshot gone, the record files and the journal give the same records.
    @Test(.tags(.slow), .notInFastRuns) func sigkillDuringMetadataOnlySavesLosesNothing() throws {
        let path = makeTemporaryDirectory("crash-rename")
        var generator = SystemRandomNumberGenerator()
        var renamed = 0
        for round in 0..<20 {
            let prefix = "p\(round % 2)"  // two sets of records, each renamed again and again
            let reported = try killedRun(["rename", path, prefix, "100000"], after: 30_000...150_000, &generator)
            let db = try makeDatabase(path)
            #expect(try db.check().problems.isEmpty, "round \(round)")
            if let last = reported.max() {
                renamed += last + 1
                // The next rename (not reported) touches another record: this one is exactly as returned.
                let record = try db.record(for: RecordID(recordName: "\(prefix)-\(last % 50)"))
                #expect(record["title"] == .string("t-\(last)"), "round \(round)")
            }
            for n in 0..<50 {
                guard let record = try? db.record(for: RecordID(recordName: "\(prefix)-\(n)")) else { continue }
                #expect(record["text"] == .string(String(repeating: "renamed\(n)-line with some words ", count: 3 + (n * 37) % 200)))
            }
        }
        #expect(renamed > 20, "the child renamed \(renamed) times over 20 kills")
        let before = try makeDatabase(path)
        let titles = (0..<50).map { try? before.record(for: RecordID(recordName: "p0-\($0)"))["title"] }
        // The checkpoint writes the lagging record files; without the index file they alone hold the records.
        try before.checkpoint()
        try FileManager.default.removeItem(atPath: path + "/indexes/records.sqlite")
        let rebuilt = try makeDatabase(path)
        #expect((0..<50).map { try? rebuilt.record(for: RecordID(recordName: "p0-\($0)"))["title"] } == titles)
    }
}

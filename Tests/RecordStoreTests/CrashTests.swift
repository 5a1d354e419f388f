import Foundation
import Testing

@testable import RecordStore

/// A child commits in a loop and is killed with SIGKILL at random moments; after every kill the
/// database opens, passes check(), and every modify the child reported as returned is there in full.
@Suite struct CrashTests {
    @Test func sigkillAtRandomMomentsLosesNoReturnedModify() throws {
        let path = makeTemporaryDirectory("crash")
        var generator = SystemRandomNumberGenerator()
        var lastReported = -1
        var round = 0
        var totalCommitted = 0
        while round < 40 {
            let prefix = "r\(round)"
            let (child, pipe) = try launch("recordstore-stress", ["commit", path, prefix, "100000"])
            usleep(UInt32.random(in: 20_000...150_000, using: &generator))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            // Complete lines only: the kill may cut the last one.
            let reported = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
                .compactMap { $0.hasPrefix("ok ") ? Int($0.dropFirst(3)) : nil }
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
}

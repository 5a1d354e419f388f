import Foundation
import TestSupport
import Testing

@testable import RecordStore

@Suite struct MultiProcessTests {
    @Test(.tags(.slow), .notInFastRuns) func twoProcessesCommitConcurrentlyWithoutLoss() throws {
        let path = makeTemporaryDirectory("multi")
        let db = try makeDatabase(path)
        let start = db.currentToken
        let perProcess = 150
        let a = try launch("recordstore-stress", ["counter", path, "shared", "\(perProcess)"])
        let b = try launch("recordstore-stress", ["counter", path, "shared", "\(perProcess)"])
        let c = try launch("recordstore-stress", ["commit", path, "own", "60"])
        var outputs: [String] = []
        for (process, pipe) in [a, b, c] {
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            outputs.append(String(decoding: data, as: UTF8.self))
            #expect(process.terminationStatus == 0, "\(outputs.last!)")
        }
        try db.refresh()
        // Nothing lost: every increment of both processes is in the counter.
        #expect(try db.record(for: RecordID(recordName: "shared"))["n"] == .int64(Int64(2 * perProcess)))
        // The counter process that finished last saw every increment of both (its token counts
        // them); which one that is depends on scheduling.
        let tokens = outputs.prefix(2).compactMap {
            $0.split(separator: "\n").first { $0.hasPrefix("token ") }.flatMap { ChangeToken(stringValue: String($0.dropFirst(6))) }
        }
        #expect(tokens.count == 2)
        #expect(tokens.map(\.seq).max()! >= UInt64(2 * perProcess), "\(tokens)")
        // And this process sees everything through change tokens.
        let changes = try db.changes(since: start)
        let names = Set(changes.changed.map(\.recordID.recordName))
        #expect(names.contains("shared"))
        #expect(names.isSuperset(of: ["own-59-a", "own-59-b", "own-59-c"]))
        #expect(changes.deleted.contains(RecordID(recordName: "own-0-a")))
        #expect(try db.check().problems.isEmpty)
    }
}

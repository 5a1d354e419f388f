import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// A push transaction is bounded by bytes as pages are: large notes go a few at a time, so that
/// what a push holds in memory does not grow with the notes' sum.
@Suite(.tags(.postgres), .needsPostgres) struct PushBatchTests {
    @Test func largeNotesArePushedAFewPerTransaction() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let size = 2 << 20
        let notes = (0..<12).map { n in note("Big \(n)", id: "big\(n)", text: String(repeating: "\(n % 10)", count: size)) }
        try a.save(notes)
        let engine = try SyncEngine(database: a.database)
        var pages: [Int64] = []
        var last: Int64 = 0
        engine.progress = { progress in
            guard progress.direction == .up else { return }
            pages.append(progress.bytes - last)
            last = progress.bytes
        }
        try engine.sync()
        #expect(pages.count >= 3, "\(pages)")
        #expect(pages.allSatisfy { $0 <= Int64(ServerContainer.pageBytes + size + 4096) }, "\(pages)")
        try b.sync()
        #expect(try b.notes().count == 12)
    }
}

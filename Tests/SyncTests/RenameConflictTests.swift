import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// Two machines that rename one note differently offline: the rename that reaches the server last
/// wins, and the sync that decided it says so (its report, `sync status`), so a user can tell.
@Suite(.tags(.postgres), .needsPostgres) struct RenameConflictTests {
    @Test func theLaterRenameWinsAndIsReported() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Plan", id: "plan", text: "one\n")])
        try syncAll(machines)
        var onA = try a.note("plan")
        onA.title = "Plan from A"
        try a.save([onA.record])
        Thread.sleep(forTimeInterval: 0.05)
        var onB = try b.note("plan")
        onB.title = "Plan from B"
        try b.save([onB.record])
        try a.sync()
        let report = try b.sync()
        #expect(report.decided.map(\.key) == ["title"])
        #expect(report.decided.first?.kept == "Plan from B" && report.decided.first?.dropped == "Plan from A")
        let status = try notesfs(b.path, ["sync", "status"])
        #expect(status.out.contains("changed on two machines, the change that reached the server last kept: 1"), "\(status.out)")
        #expect(status.out.contains("title: kept 'Plan from B', dropped 'Plan from A'"), "\(status.out)")
        try syncAll(machines)
        #expect(try a.note("plan").title == "Plan from B" && b.note("plan").title == "Plan from B")
    }
}

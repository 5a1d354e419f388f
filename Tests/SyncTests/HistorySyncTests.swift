import Foundation
import Notes
import Postgres
import RecordStore
import Sync
import TestSupport
import Testing

/// Note history across machines: versions are records and sync like any other.
@Suite(.tags(.postgres), .needsPostgres) struct HistorySyncTests {
    private func versions(_ machine: Machine, _ name: String = "plan") -> [Version] {
        VersionHistory.versions(ofNoteNamed: name, in: machine.database)
    }

    @Test func aVersionMadeOnOneMachineIsRestoredOnAnother() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        for machine in machines { VersionHistory.install(on: machine.database, settings: HistorySettings(interval: 600)) }
        try a.save([folder("Work", id: "work"), note("Plan", id: "plan", text: "first\n", folder: "work")])
        try syncAll([a, b])
        try a.append("second\n", to: "plan")  // keeps "first" as a version on A
        #expect(versions(a).map(\.text) == ["first\n"])
        try syncAll([a, b])
        // B holds A's version, and applying A's save made no version of its own.
        #expect(versions(b).map(\.recordID) == versions(a).map(\.recordID))
        #expect(try b.note("plan").text == "first\nsecond\n")
        let restored = try VersionHistory.restore(try #require(versions(b).first), in: b.database)
        #expect(restored["text"] == .string("first\n"))
        try syncAll([a, b])
        #expect(try a.note("plan").text == "first\n")
        // The restore's own version (of "first\nsecond\n") reached A too: it can be undone there.
        #expect(versions(a).map(\.kindName) == ["edit", "restore"])
        #expect(versions(a).map(\.recordID) == versions(b).map(\.recordID))
        #expect(try a.contents() == b.contents())
    }

    @Test func aMergeKeepsTheLocalStateItReplaced() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        for machine in machines { VersionHistory.install(on: machine.database, settings: HistorySettings(interval: 600)) }
        try a.save([note("Plan", id: "plan", text: "intro\n\nmiddle\n\nend\n")])
        try syncAll([a, b])
        var onA = try a.note("plan")
        onA.text = "intro by A\n\nmiddle\n\nend\n"
        try a.save([onA.record])
        try a.sync()
        var onB = try b.note("plan")
        onB.text = "intro\n\nmiddle\n\nend by B\n"
        try b.save([onB.record])
        try b.sync()  // merges A's edit into B's: B's own state before the merge is kept
        #expect(try b.note("plan").text == "intro by A\n\nmiddle\n\nend by B\n")
        let kinds = versions(b).map { "\($0.kindName):\($0.text!)" }
        #expect(kinds.contains("merge:intro\n\nmiddle\n\nend by B\n"))  // B's side
        #expect(kinds.contains("merge:intro by A\n\nmiddle\n\nend\n"))  // and A's
        try syncAll([a, b])
        #expect(versions(a).count == versions(b).count)
        #expect(try a.contents() == b.contents())
    }
}

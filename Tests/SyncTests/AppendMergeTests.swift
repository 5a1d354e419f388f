import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// Two machines appending to one note (a log, a journal): insertions at the same place that delete
/// nothing merge as both, the server's first; a conflict copy only when the same text was changed
/// in two different ways.
@Suite struct AppendMergeTests {
    @Test(.tags(.postgres), .needsPostgres) func appendsOnTwoMachinesMergeWithoutAConflictCopy() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Log", id: "log", text: "start\n")])
        try syncAll(machines)
        for round in 0..<5 {
            try a.append("a \(round)\n", to: "log")
            try b.append("b \(round)\n", to: "log")
            let first = try a.sync()
            let second = try b.sync()
            #expect(first.conflictCopies.isEmpty && second.conflictCopies.isEmpty, "round \(round)")
            try a.sync()
        }
        let expected = "start\n" + (0..<5).map { "a \($0)\nb \($0)\n" }.joined()
        #expect(try a.note("log").text == expected)
        #expect(try b.note("log").text == expected)
        #expect(try a.notes().count == 1 && b.notes().count == 1)
    }

    @Test func theSameLineChangedTwoWaysIsStillAConflict() {
        #expect(TextMerge.merge(base: "x\ny\n", local: "x\nlocal\n", server: "x\nserver\n") == nil)
        #expect(TextMerge.merge(base: "x\n", local: "x\nlocal\n", server: "x\nserver\n") == "x\nserver\nlocal\n")
        #expect(TextMerge.merge(base: "x\nz\n", local: "x\nL\nz\n", server: "x\nS\nz\n") == "x\nS\nL\nz\n")
    }
}

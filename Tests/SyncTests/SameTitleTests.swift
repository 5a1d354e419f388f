import Foundation
import Notes
import RecordStore
import Sync
import TestSupport
import Testing

/// Two machines each create a note of the same title in the same folder while apart: after a sync
/// both show the two notes under the same two file names (the earliest created keeps the plain
/// name, DESIGN.md §4), so the machines' exports are equal byte for byte.
@Suite(.tags(.postgres), .needsPostgres) struct SameTitleTests {
    @Test func sameTitledNotesGetTheSameNamesOnEveryMachine() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Todo", id: "todo-a", text: "from A\n")])
        try b.save([note("Todo", id: "todo-b", text: "from B\n")])
        try syncAll(machines)
        let exports = try exportTrees(machines)
        #expect(try differences(between: exports).isEmpty, "the machines name the two notes differently")
        // A's note was created first, on A: it keeps the plain name everywhere.
        for directory in exports {
            #expect(try String(contentsOfFile: directory + "/Todo.md", encoding: .utf8) == "from A\n")
        }
        for machine in [a, b] {
            let dates = try ["todo-a", "todo-b"].map { try machine.database.record(for: RecordID(recordName: $0)).creationDate }
            #expect(dates == (try ["todo-a", "todo-b"].map { try a.database.record(for: RecordID(recordName: $0)).creationDate }))
        }
        for directory in exports { try? FileManager.default.removeItem(atPath: directory) }
    }
}

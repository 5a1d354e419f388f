import Foundation
import Notes
import RecordStore
import Sync
import TestSupport
import Testing

/// Two machines move two folders into each other between syncs: each move alone is fine, together
/// they would make a cycle that no path from the root reaches (the notes inside would vanish from
/// the mount and exports).
@Suite(.tags(.postgres), .needsPostgres) struct FolderCycleTests {
    func move(_ name: String, into parent: String?, on machine: Machine) throws {
        var folder = try Folder(record: machine.database.record(for: RecordID(recordName: name)))
        folder.parent = parent.map(RecordID.init(recordName:))
        try machine.save([folder.record])
    }

    @Test func crossedFolderMovesMakeNoCycle() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([folder("F", id: "f"), folder("G", id: "g"), note("In F", id: "in-f", text: "kept\n", folder: "f")])
        try syncAll(machines)
        try move("f", into: "g", on: a)
        try move("g", into: "f", on: b)
        try syncAll(machines)
        for machine in machines {
            let problems = try machine.database.check().problems
            #expect(problems.isEmpty, "\(problems.map(\.description))")
        }
        #expect(try a.contents() == b.contents())
        let exports = try exportTrees(machines)
        #expect(try differences(between: exports).isEmpty)
        let exported = try run("/usr/bin/find", [exports[0], "-name", "In F.md"], mergingErrors: true).out
        #expect(!exported.isEmpty, "the note inside the folders is not in the export")
        for directory in exports { try? FileManager.default.removeItem(atPath: directory) }
    }
}

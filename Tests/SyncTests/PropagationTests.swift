import Foundation
import Notes
import Postgres
import RecordStore
import Sync
import TestSupport
import Testing

/// Changes made on one machine show on the others after each has synced.
@Suite(.tags(.postgres), .needsPostgres) struct PropagationTests {
    @Test func aNoteCreatedEditedRenamedMovedAndDeletedPropagates() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([folder("Work", id: "work"), note("Plan", id: "plan", text: "step 1\n")])
        try syncAll(machines)
        #expect(try b.note("plan").text == "step 1\n")
        #expect(try b.note("plan").folder == nil)

        var plan = try b.note("plan")
        plan.text += "step 2\n"
        plan.title = "Plan v2"
        plan.folder = RecordID(recordName: "work")
        try b.save([plan.record])
        try syncAll(machines)
        let seen = try a.note("plan")
        #expect(seen.text == "step 1\nstep 2\n")
        #expect(seen.title == "Plan v2")
        #expect(seen.folder == RecordID(recordName: "work"))

        try a.database.modify(deleting: [RecordID(recordName: "plan")])
        try syncAll(machines)
        #expect(!b.has("plan"))
        #expect(b.has("work"))
        #expect(try a.contents() == b.contents())
    }

    @Test func aFolderCascadePropagates() throws {
        let (server, machines) = try makeMachines(3)
        try machines[0].save([
            folder("Top", id: "top"), folder("Inner", id: "inner", parent: "top"),
            note("One", id: "one", folder: "top"), note("Two", id: "two", folder: "inner"), note("Kept", id: "kept"),
        ])
        try syncAll(machines)
        #expect(machines[2].has("two"))
        try machines[1].database.modify(deleting: [RecordID(recordName: "top")])
        try syncAll(machines)
        for machine in machines {
            #expect(!machine.has("top") && !machine.has("inner") && !machine.has("one") && !machine.has("two"))
            #expect(machine.has("kept"))
        }
        let rows = try serverRows(server)
        #expect(rows.filter { $0.value.deleted }.keys.sorted() == ["inner", "one", "top", "two"])
        #expect(try machines[0].contents() == machines[2].contents())
    }

    @Test func manyNotesPropagateInPages() throws {
        let (server, machines) = try makeMachines(2)
        let folders = (0..<5).map { folder("F\($0)", id: "f\($0)") }
        let notes = (0..<450).map { note("N\($0)", id: "n\($0)", text: "line \($0)\n", folder: "f\($0 % 5)") }
        try machines[0].save(folders + notes)
        try syncAll(machines)
        #expect(try machines[1].notes().count == 450)
        #expect(try machines[0].contents() == machines[1].contents())
        #expect(try serverRows(server).count == 455)
    }

    @Test func anAttachmentAssetIsUploadedOnceAndDownloaded() throws {
        let (server, machines) = try makeMachines(2)
        let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let asset = try machines[0].database.makeAsset(bytes)
        var first = Record(recordType: "Attachment", recordID: RecordID(recordName: "file1"))
        first["data"] = .asset(asset)
        var second = Record(recordType: "Attachment", recordID: RecordID(recordName: "file2"))
        second["data"] = .asset(asset)
        try machines[0].save([first, second])
        try syncAll(machines)
        let copy = try machines[1].database.record(for: RecordID(recordName: "file2"))
        #expect(try copy["data"]?.assetValue.map { try machines[1].database.assetData($0) } == bytes)
        let assets = try Connection(server).execute("SELECT count(*) AS n FROM notesfs_assets")
        #expect(assets.value(0, "n") == "1")
    }
}

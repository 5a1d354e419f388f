import Foundation
import Notes
import RecordStore
import Testing

@testable import Sync

/// The user writes after a crash that fell between a server transaction (or a local apply) and the
/// save of the state that records it; emulated, as in ``SyncCrashTests``, by putting back the state
/// files as they were before the sync (``SavedSyncState``). What the user wrote then wins, and nothing is doubled.
@Suite struct SyncCrashWindowTests {

    func append(_ line: String, to name: String, on machine: Machine) throws {
        var note = try machine.note(name)
        note.text += line
        try machine.save([note.record])
    }

    /// A's push committed, its state never heard of it, then A edits the note: the server's
    /// version is A's own, so the edit is pushed over it (it was a conflict copy of A's own text).
    @Test func anEditAfterACrashedPushIsPushedOverItsOwnVersion() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Plan", id: "plan", text: "one\n"), note("Other", id: "other", text: "other\n")])
        let before = try SavedSyncState(a)
        try a.sync()
        try before.restore()
        try append("two\n", to: "plan", on: a)
        let report = try a.sync()
        #expect(report.conflictCopies.isEmpty)
        try syncAll(machines)
        for machine in [a, b] {
            #expect(try machine.notes().count == 2)
            #expect(try machine.note("plan").text == "one\ntwo\n")
        }
        #expect(try a.contents() == b.contents())
    }

    /// A's push committed, its state never heard of it, then A deletes the note: the delete
    /// reaches the server (the note came back from A's own pushed version).
    @Test func aDeleteAfterACrashedPushIsPushed() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Gone", id: "gone", text: "one\n"), note("Kept", id: "kept")])
        let before = try SavedSyncState(a)
        try a.sync()
        try before.restore()
        try a.database.modify(deleting: [RecordID(recordName: "gone")])
        try syncAll(machines)
        for machine in [a, b] {
            #expect(!machine.has("gone"))
            #expect(machine.has("kept"))
        }
        #expect(try serverRows(server)["gone"]?.deleted == true)
    }

    /// B's record of a note it synced is gone (its file in `<db>/sync/records`), then B edits the
    /// note: the push loses to the server's version, which B had fetched long ago, so no page brings
    /// it again; the sync fetches it by name and merges (the edit stayed pending for ever, every
    /// sync saying it had succeeded).
    @Test func aPushThatLosesToAVersionFetchedLongAgoIsMerged() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Plan", id: "plan", text: "one\n"), note("Other", id: "other")])
        try syncAll(machines)
        try FileManager.default.removeItem(atPath: SyncedRecordFiles.path(of: "plan", in: SyncedRecordFiles.directory(forDatabase: b.path)))
        try append("two\n", to: "plan", on: b)
        try syncAll(machines)
        for machine in machines {
            #expect(try SyncStatus.read(database: machine.database)?.pendingChanges == 0)
            #expect(try machine.notes().contains { $0.text == "one\ntwo\n" }, "B's edit reached no note")
        }
        #expect(try a.contents() == b.contents())
    }

    /// B's apply of a pulled page committed, its state never heard of it, then B edits a pulled
    /// note: the edit is B's alone and wins without a conflict copy (the page's own marker record,
    /// committed with it, names the server version the note was saved from: the merge base).
    @Test func anEditAfterACrashedPullMakesNoConflictCopy() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Plan", id: "plan", text: "one\n")])
        try a.sync()
        let before = try SavedSyncState(b)
        try b.sync()
        try before.restore()
        try append("two\n", to: "plan", on: b)
        try syncAll(machines)
        let texts = try [a, b].map { machine in try machine.notes().map(\.text).sorted() }
        for notes in texts { #expect(notes == ["one\ntwo\n"]) }
        #expect(try SyncStatus.read(database: b.database)?.conflicts.isEmpty == true)
        #expect(try a.contents() == b.contents())
    }

    /// The same after a pull that merged a local edit with the server's: the merged text, and
    /// what B writes after the crash, reach both machines; no conflict copy.
    @Test func anEditAfterACrashedMergingPullIsPushedWhole() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Plan", id: "plan", text: "top\n\nmiddle\n\nend\n")])
        try syncAll(machines)
        var fromA = try a.note("plan")
        fromA.text = "top by A\n\nmiddle\n\nend\n"
        try a.save([fromA.record])
        try a.sync()
        var fromB = try b.note("plan")
        fromB.text = "top\n\nmiddle\n\nend by B\n"
        try b.save([fromB.record])
        let before = try SavedSyncState(b)
        var report = try b.sync()
        #expect(report.merged == 1)
        try before.restore()
        try append("after the crash\n", to: "plan", on: b)
        report = try b.sync()
        #expect(report.conflictCopies.isEmpty)
        try syncAll(machines)
        let expected = "top by A\n\nmiddle\n\nend by B\nafter the crash\n"
        for machine in [a, b] { #expect(try machine.notes().map(\.text) == [expected]) }
        #expect(try a.contents() == b.contents())
    }
}

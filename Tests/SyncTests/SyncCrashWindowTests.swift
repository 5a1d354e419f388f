import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// The user writes after a crash that fell between a server transaction (or a local apply) and the
/// save of the state that records it; emulated, as in ``SyncCrashTests``, by putting back the state
/// files as they were before the sync (``SavedSyncState``). What the user wrote then wins, and nothing is doubled.
@Suite(.tags(.postgres), .needsPostgres) struct SyncCrashWindowTests {

    /// A's push committed, its state never heard of it, then A edits the note: the server's
    /// version is A's own, so the edit is pushed over it (it was a conflict copy of A's own text).
    @Test func anEditAfterACrashedPushIsPushedOverItsOwnVersion() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Plan", id: "plan", text: "one\n"), note("Other", id: "other", text: "other\n")])
        let before = try SavedSyncState(a)
        try a.sync()
        try before.restore()
        try a.append("two\n", to: "plan")
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
        try b.append("two\n", to: "plan")
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
        try b.append("two\n", to: "plan")
        try syncAll(machines)
        let texts = try [a, b].map { machine in try machine.notes().map(\.text).sorted() }
        for notes in texts { #expect(notes == ["one\ntwo\n"]) }
        #expect(try SyncStatus.read(database: b.database)?.conflicts.isEmpty == true)
        #expect(try a.contents() == b.contents())
    }

    /// Sets the text of the note `name` on `machine`.
    func setText(_ text: String, of name: String, on machine: Machine) throws {
        var note = try machine.note(name)
        note.text = text
        try machine.save([note.record])
    }

    /// Plan, synced on A and B, then edited on both: its top line on A (pushed), its end on B.
    func editedOnBoth() throws -> (a: Machine, b: Machine) {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Plan", id: "plan", text: "top\n\nmiddle\n\nend\n")])
        try syncAll(machines)
        try setText("top by A\n\nmiddle\n\nend\n", of: "plan", on: a)
        try a.sync()
        try setText("top\n\nmiddle\n\nend by B\n", of: "plan", on: b)
        return (a, b)
    }

    /// The same after a pull that merged a local edit with the server's: the merged text, and
    /// what B writes after the crash, reach both machines; no conflict copy.
    @Test func anEditAfterACrashedMergingPullIsPushedWhole() throws {
        let (a, b) = try editedOnBoth()
        let before = try SavedSyncState(b)
        var report = try b.sync()
        #expect(report.merged == 1)
        try before.restore()
        try b.append("after the crash\n", to: "plan")
        report = try b.sync()
        #expect(report.conflictCopies.isEmpty)
        try syncAll([a, b])
        let expected = "top by A\n\nmiddle\n\nend by B\nafter the crash\n"
        try expectNoteTexts([expected], on: [a, b])
        #expect(try a.contents() == b.contents())
    }

    /// Syncs `machine` fetching and pushing `size` records a page.
    @discardableResult
    func sync(_ machine: Machine, pagesOf size: Int) throws -> SyncReport {
        let engine = try SyncEngine(database: machine.database)
        engine.batchSize = size
        return try engine.sync()
    }

    /// The record names the applied-page marker of `machine` names.
    func markedNames(_ machine: Machine) throws -> Set<String> {
        let record = try machine.database.record(for: RecordID(recordName: AppliedPageMarker.recordName))
        return Set(AppliedPageMarker(record)?.applied.keys.map { $0 } ?? [])
    }

    /// A's two notes, pushed one after the other, reached B in two pages; the apply of the second
    /// (Plan) committed and B's state never heard of either: B's next pull applies Other's page
    /// again (its commit writes a marker of its own) before it reaches Plan.
    func crashedPullOfTwoPages() throws -> (a: Machine, b: Machine) {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Other", id: "other", text: "other\n")])
        try a.sync()
        try a.save([note("Plan", id: "plan", text: "one\ntwo\n")])
        try a.sync()
        let before = try SavedSyncState(b)
        try sync(b, pagesOf: 1)
        try before.restore()
        #expect(try markedNames(b) == ["plan"])
        return (a, b)
    }

    /// After such a crash A edits Plan (at the top), so its newer version comes after Other's page;
    /// B edits it too (at the end) or not: the merge against the version B's killed apply saved is
    /// clean, whatever page came first. (The marker was replaced by Other's page, and Plan merged
    /// against no base: a conflict copy of the applied text, with B's edit or without.)
    @Test(arguments: [false, true]) func aNewerServerVersionPagesAfterACrashedPullMergesClean(editedOnB: Bool) throws {
        let (a, b) = try crashedPullOfTwoPages()
        var onA = try a.note("plan")
        onA.text = "top\n" + onA.text
        try a.save([onA.record])
        try a.sync()
        if editedOnB { try b.append("end\n", to: "plan") }
        let report = try sync(b, pagesOf: 1)
        #expect(report.conflictCopies.isEmpty)
        try syncAll([a, b])
        let expected = "top\none\ntwo\n" + (editedOnB ? "end\n" : "")
        try expectNoteTexts([expected, "other\n"], on: [a, b])
        #expect(try SyncStatus.read(database: b.database)?.conflicts.isEmpty == true)
        #expect(try a.contents() == b.contents())
    }

    /// After such a crash B deletes Plan: the delete reaches A, Plan does not come back.
    @Test func aDeleteAfterACrashedPullOfPagesStays() throws {
        let (a, b) = try crashedPullOfTwoPages()
        try b.database.modify(deleting: [RecordID(recordName: "plan")])
        try sync(b, pagesOf: 1)
        try syncAll([a, b])
        for machine in [a, b] {
            #expect(!machine.has("plan"))
            #expect(machine.has("other"))
        }
        #expect(try a.contents() == b.contents())
    }

    /// B's pull merged B's edit with A's and committed, then B stopped before its state recorded
    /// the page and before it pushed; A edits the note again. B's merged edit, still to push, is
    /// kept and merges with A's new one (it was replaced by A's version: B's line was lost).
    @Test func aNewerServerVersionAfterACrashedMergingPullKeepsTheMerge() throws {
        let (a, b) = try editedOnBoth()
        let before = try SavedSyncState(b)
        let engine = try SyncEngine(database: b.database)
        try engine.state.reload(databasePath: b.path)  // as sync() does first
        var report = SyncReport()
        try engine.pull(&report)  // the pull alone: the push never ran
        #expect(report.merged == 1 && report.conflictCopies.isEmpty)
        try before.restore()
        try setText("top by A\n\nmiddle by A\n\nend\n", of: "plan", on: a)
        try a.sync()
        report = try b.sync()
        #expect(report.conflictCopies.isEmpty)
        try syncAll([a, b])
        let expected = "top by A\n\nmiddle by A\n\nend by B\n"
        try expectNoteTexts([expected], on: [a, b])
        #expect(try a.contents() == b.contents())
    }

    /// B's push of a line at the end committed and its state never heard of it (its intent left,
    /// ``pushCommittedWithoutItsState(on:record:)``); A fetches it and puts a line at the top; B adds
    /// another line at the end, or none. The merge base is the version B pushed (its key on the
    /// server says the push committed): clean either way. (Before intents, B's base was the version
    /// before its push, so with B's second line its two lines and the server's one overlapped and a
    /// conflict copy was made though nothing overlapped since the versions both agreed on.)
    @Test(arguments: [false, true]) func aNewerServerVersionOverACrashedPush(editedAgainOnB: Bool) throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Plan", id: "plan", text: "one\ntwo\n")])
        try syncAll(machines)
        try b.append("b1\n", to: "plan")
        try pushCommittedWithoutItsState(on: b, record: "plan")
        try a.sync()
        try setText("top\n" + (try a.note("plan").text), of: "plan", on: a)
        try a.sync()
        if editedAgainOnB { try b.append("b2\n", to: "plan") }
        let report = try b.sync()
        try syncAll(machines)
        let expected = "top\none\ntwo\nb1\n" + (editedAgainOnB ? "b2\n" : "")
        #expect(report.conflictCopies.isEmpty)
        try expectNoteTexts([expected], on: [a, b])
        #expect(!FileManager.default.fileExists(atPath: PushIntent.path(forDatabase: b.path)))
        #expect(try a.contents() == b.contents())
    }
}

import Foundation
import Notes
import Postgres
import RecordStore
import Sync
import TestSupport
import Testing

/// Both machines change the same note between syncs: nothing either wrote is lost.
@Suite(.tags(.postgres), .needsPostgres) struct SyncConflictTests {
    static let text = "# Plan\n\nintro\n\nmiddle\n\nend\n"

    /// Two machines that both hold note "plan" with ``text``, synced.
    func twoMachinesWithAPlan() throws -> (Machine, Machine) {
        let (_, machines) = try makeMachines(2)
        try machines[0].save([folder("Work", id: "work"), note("Plan", id: "plan", text: Self.text, folder: "work")])
        try syncAll(machines)
        return (machines[0], machines[1])
    }

    func edit(_ machine: Machine, _ name: String = "plan", _ change: (inout Note) -> Void) throws {
        var note = try machine.note(name)
        change(&note)
        try machine.save([note.record])
    }

    @Test func editsThatDoNotOverlapMerge() throws {
        let (a, b) = try twoMachinesWithAPlan()
        try edit(a) { $0.text = $0.text.replacingOccurrences(of: "intro", with: "intro from A") }
        try edit(b) { $0.text = $0.text.replacingOccurrences(of: "end", with: "end from B") }
        try syncAll([a, b])
        let merged = "# Plan\n\nintro from A\n\nmiddle\n\nend from B\n"
        #expect(try a.note("plan").text == merged)
        #expect(try b.note("plan").text == merged)
        #expect(try a.notes().count == 1)
        #expect(try a.contents() == b.contents())
        #expect(try SyncEngine(database: a.database).state.conflicts.isEmpty)
    }

    @Test func editsThatOverlapKeepBothAsAConflictCopy() throws {
        let (a, b) = try twoMachinesWithAPlan()
        try edit(a) { $0.text = $0.text.replacingOccurrences(of: "middle", with: "middle by A") }
        try a.sync()  // A reaches the server first: its text stays under the note's name
        try edit(b) { $0.text = $0.text.replacingOccurrences(of: "middle", with: "middle by B") }
        try syncAll([a, b])
        for machine in [a, b] {
            let notes = try machine.notes().sorted { $0.title < $1.title }
            #expect(notes.count == 2)
            #expect(notes.first { $0.recordID.recordName == "plan" }?.text.contains("middle by A") == true)
            let copy = notes.first { $0.recordID.recordName != "plan" }
            #expect(copy?.text.contains("middle by B") == true)
            #expect(copy?.title.hasPrefix("Plan (conflict ") == true)
            #expect(copy?.folder == RecordID(recordName: "work"))
        }
        #expect(try a.contents() == b.contents())
        let conflicts = try SyncEngine(database: b.database).state.conflicts
        #expect(conflicts.map(\.recordName) == ["plan"])
    }

    @Test func titleAndTextChangesOnDifferentSidesBothStay() throws {
        let (a, b) = try twoMachinesWithAPlan()
        try edit(a) { $0.title = "Renamed Plan" }
        try edit(b) { $0.text += "more\n" }
        try syncAll([a, b])
        for machine in [a, b] {
            #expect(try machine.note("plan").title == "Renamed Plan")
            #expect(try machine.note("plan").text == Self.text + "more\n")
        }
    }

    @Test func anEditBeatsADelete() throws {
        let (a, b) = try twoMachinesWithAPlan()
        try a.database.modify(deleting: [RecordID(recordName: "plan")])
        try a.sync()
        try edit(b) { $0.text += "edited offline\n" }
        try syncAll([a, b])
        for machine in [a, b] { #expect(try machine.note("plan").text == Self.text + "edited offline\n") }
        #expect(try a.contents() == b.contents())
    }

    @Test func aDeleteSeenAfterAnEditIsUndoneByTheEdit() throws {
        let (a, b) = try twoMachinesWithAPlan()
        try edit(b) { $0.text += "edited first\n" }
        try b.sync()
        try a.database.modify(deleting: [RecordID(recordName: "plan")])
        try syncAll([a, b])
        for machine in [a, b] { #expect(try machine.note("plan").text == Self.text + "edited first\n") }
    }

    @Test func aNoteEditedInAFolderDeletedElsewhereIsRecovered() throws {
        let (a, b) = try twoMachinesWithAPlan()
        try a.database.modify(deleting: [RecordID(recordName: "work")])
        try a.sync()
        try edit(b) { $0.text += "edited in a folder that is gone\n" }
        try syncAll([a, b])
        for machine in [a, b] {
            #expect(!machine.has("work"))
            let plan = try machine.note("plan")
            #expect(plan.text.hasSuffix("edited in a folder that is gone\n"))
            let recovered = try plan.folder.map { try Folder(record: machine.database.record(for: $0)) }
            #expect(recovered?.name == "Recovered")
        }
        #expect(try a.contents() == b.contents())
    }

    /// A change that loses every race (here a server trigger drops every write of it, as if
    /// another machine always pushed first) stays pending and is reported after the last round,
    /// instead of the sync calling itself a success; the others go through.
    @Test func aChangeThatKeepsLosingRacesIsReported() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let admin = try Connection(server)
        try admin.execute(
            """
            CREATE FUNCTION drop_contested() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.record_name = 'contested' THEN RETURN NULL; END IF; RETURN NEW; END $$
            """)
        try admin.execute(
            "CREATE TRIGGER drop_contested BEFORE INSERT OR UPDATE ON notesfs_records FOR EACH ROW EXECUTE FUNCTION drop_contested()")
        try a.save([note("Contested", id: "contested", text: "mine\n"), note("Other", id: "other", text: "other\n")])
        try a.sync()
        let status = try #require(try SyncStatus.read(database: a.database))
        #expect(status.lastError?.contains("lost 5 races in a row") == true, "\(status.lastError ?? "nil")")
        #expect(status.pendingChanges == 1)
        try b.sync()
        #expect(b.has("other") && !b.has("contested"))
        try admin.execute("DROP TRIGGER drop_contested ON notesfs_records")
        try a.sync()
        #expect(try SyncStatus.read(database: a.database)?.lastError == nil)
        try b.sync()
        #expect(try b.note("contested").text == "mine\n")
    }
}

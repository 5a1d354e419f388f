import Foundation
import Postgres
import RecordStore
import TestSupport
import Testing

@testable import Sync

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A push's intent (`<db>/sync/pushing.json`) and its key on the server (`notesfs_pushes`): after
/// a `kill -9` the next sync learns whether the push committed, and merges against what it pushed.
@Suite(.tags(.postgres), .needsPostgres) struct SyncPushIntentTests {

    func count(_ table: String, _ server: String) throws -> Int {
        Int(try Connection(server).execute("SELECT count(*) AS n FROM \(table)").value(0, "n") ?? "") ?? -1
    }

    /// The server's rows of the push key that `machine`'s intent names (the intent must be there).
    func keyRows(_ machine: Machine, _ server: String) throws -> [String] {
        let intent = try #require(PushIntent.load(databasePath: machine.path))
        let result = try Connection(server).execute(
            "SELECT record_name FROM notesfs_pushes WHERE client_id = $1 AND push_key = $2", [intent.key.clientID, intent.key.value])
        return result.rows.compactMap { $0[0] }
    }

    /// A puts a line at the top of Plan and syncs, then B one at the end and syncs: no conflict
    /// copy; after both sync again, both hold the note texts `expected` (sorted).
    func editTopOnAThenEndOnB(_ a: Machine, _ b: Machine, expecting expected: [String]) throws {
        var onA = try a.note("plan")
        onA.text = "top\n" + onA.text
        try a.save([onA.record])
        try a.sync()
        try b.append("b2\n", to: "plan")
        let report = try b.sync()
        #expect(report.conflictCopies.isEmpty)
        try syncAll([a, b])
        try expectNoteTexts(expected, on: [a, b])
    }

    /// B's push is held inside its transaction (at its key's row) and B is killed there; the backend
    /// is then terminated, or released to find its client gone: either way the push did not commit.
    /// B's next sync finds its key absent and keeps the line pending: it is pushed once, merged with
    /// A's edit, never lost (taking the intent as committed would record B's line as synced) and
    /// never doubled.
    @Test(arguments: [true, false]) func aPushKilledBeforeItsCommitIsPushedAgain(terminated: Bool) throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Plan", id: "plan", text: "one\ntwo\n"), note("Other", id: "other", text: "x\n")])
        try syncAll(machines)
        try b.append("b1\n", to: "plan")
        let connection = try Connection(server)
        try holdInserts(into: "notesfs_pushes", when: "true", lock: 4245, on: connection)
        let sync = try startNotesfs(b.path, ["sync"])
        defer { if sync.isRunning { kill(sync.processIdentifier, SIGKILL) } }
        let pid = try #require(try backendWaitingOnAdvisoryLock(server, while: sync), "the push never reached its key")
        kill(sync.processIdentifier, SIGKILL)
        sync.waitUntilExit()
        if terminated { try connection.execute("SELECT pg_terminate_backend($1::int)", [pid]) }
        try connection.execute("SELECT pg_advisory_unlock(4245)")
        try connection.execute("DROP TRIGGER hold_notesfs_pushes ON notesfs_pushes")
        // The edit, and the version it kept (note history).
        #expect(PushIntent.load(databasePath: b.path)?.changes.map(\.recordName).filter { !versionNames(b).contains($0) } == ["plan"])
        #expect(PushIntent.load(databasePath: b.path)?.changes.count == 2)
        #expect(try keyRows(b, server).isEmpty)

        try editTopOnAThenEndOnB(a, b, expecting: ["top\none\ntwo\nb1\nb2\n", "x\n"])
        #expect(try serverRows(server).keys.filter { !versionNames(a).contains($0) }.count == 2)
        #expect(!FileManager.default.fileExists(atPath: PushIntent.path(forDatabase: b.path)))
        #expect(try a.contents() == b.contents())
    }

    /// B's push committed without its state; B's next sync is killed during the recovery (waiting
    /// for the push lock a test session holds, before it saved anything), then B adds a line and A
    /// one at the top: the sync after that recovers the same and merges clean.
    @Test func aSecondKillDuringRecoveryRecoversTheSame() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Plan", id: "plan", text: "one\ntwo\n")])
        try syncAll(machines)
        try b.append("b1\n", to: "plan")
        try pushCommittedWithoutItsState(on: b, record: "plan")
        #expect(try keyRows(b, server).filter { !versionNames(b).contains($0) } == ["plan"])

        let connection = try Connection(server)
        try connection.execute("SELECT pg_advisory_lock(\(ServerSchema.pushLock))")
        let sync = try startNotesfs(b.path, ["sync"])
        defer { if sync.isRunning { kill(sync.processIdentifier, SIGKILL) } }
        #expect(try backendWaitingOnAdvisoryLock(server, while: sync) != nil, "the recovery never asked the server")
        kill(sync.processIdentifier, SIGKILL)
        sync.waitUntilExit()
        try connection.execute("SELECT pg_advisory_unlock(\(ServerSchema.pushLock))")
        #expect(FileManager.default.fileExists(atPath: PushIntent.path(forDatabase: b.path)))

        try a.sync()
        try editTopOnAThenEndOnB(a, b, expecting: ["top\none\ntwo\nb1\nb2\n"])
        #expect(!FileManager.default.fileExists(atPath: PushIntent.path(forDatabase: b.path)))
        #expect(try a.contents() == b.contents())
        // The key rows do not pile up: each client keeps at most those of its last push.
        let clients = try Connection(server).execute("SELECT count(DISTINCT push_key) AS n FROM notesfs_pushes").value(0, "n")
        #expect(Int(clients ?? "") ?? 99 <= 2)
    }

    /// A version 2 server holding records is refused with the message to migrate; `notesfs sync
    /// init URL` takes it to version 3 (the pushes table), keeping every record; the machines then sync.
    @Test func aVersion2ServerIsMigratedWithItsRecords() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Plan", id: "plan", text: "one\n"), note("Other", id: "other", text: "x\n")])
        try syncAll(machines)
        let connection = try Connection(server)
        try connection.execute("DROP TABLE notesfs_pushes")
        try connection.execute("UPDATE notesfs_schema SET version = 2")
        let rows = try serverRows(server)
        try b.append("two\n", to: "plan")
        let refused = try notesfs(b.path, ["sync"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("run 'notesfs sync init URL' to migrate it"), "\(refused.stderr)")
        let initialize = try notesfs(b.path, ["sync", "init", server, "--no-encryption"])
        #expect(initialize.status == 0, "\(initialize.stderr)")
        #expect(try connection.execute("SELECT max(version) AS v FROM notesfs_schema").value(0, "v") == String(ServerSchema.version))
        #expect(try serverRows(server).mapValues(\.seq) == rows.mapValues(\.seq))
        try syncAll(machines)
        try expectNoteTexts(["one\ntwo\n", "x\n"], on: machines)
        // B's push of Plan and of the version its edit kept, under its key (older rows went with the dropped table)
        #expect(try count("notesfs_pushes", server) == 2)
        #expect(try a.contents() == b.contents())
    }
}

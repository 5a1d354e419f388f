import Foundation
import Notes
import Postgres
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// A database that is a copy of another (a restored backup, a cloned laptop) and a server that is
/// not the one a database last synced with (reset, replaced): detected, reconciled, nothing lost.
@Suite(.tags(.postgres), .needsPostgres) struct IdentityTests {
    /// `cp -a` of a machine's database directory (its copy, or its backup), then `machine` opened
    /// again on `path` (the copy, or the original put back).
    func copy(_ from: String, to path: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        let run = try run("/bin/cp", ["-a", from, path], mergingErrors: true)
        #expect(run.status == 0, "\(run.out)")
    }

    func open(_ path: String) throws -> Machine { Machine(database: try RecordDatabase(path: path, backgroundThread: false)) }

    @Test func aMachineRestoredFromABackupGetsBackWhatItPushedSinceAndLosesNoText() throws {
        let (server, machines) = try makeMachines(2)
        var a = machines[0]
        let b = machines[1]
        try a.save([note("Plan", id: "plan", text: "one\n")])
        try syncAll([a, b])
        let backup = a.path + "-backup"
        try copy(a.path, to: backup)
        // After the backup: a new note, and an edit, both pushed.
        try a.save([note("Since", id: "since", text: "after the backup\n")])
        try a.append("two\n", to: "plan")
        try a.sync()
        // The disk dies; the backup comes back in its place.
        try a.database.close()
        try FileManager.default.removeItem(atPath: a.path)
        try copy(backup, to: a.path)
        a = try open(a.path)
        #expect(!a.has("since"))
        // An edit made on the restored machine before it syncs again.
        try a.append("three\n", to: "plan")
        let report = try a.sync()
        #expect(report.notices.contains(SyncEngine.copyNotice), "\(report.notices)")
        #expect(try a.note("since").text == "after the backup\n")
        // Both lines survive (a merge, or a conflict copy beside the note): nothing is overwritten.
        let texts = try a.notes().map(\.text).joined()
        #expect(texts.contains("two\n") && texts.contains("three\n"), "\(texts)")
        try syncAll([a, b])
        #expect(try a.contents() == b.contents())
        #expect(try serverRows(server)["since"]?.deleted == false)
    }

    @Test func aDatabaseCopiedToANewLaptopSyncsAsAnotherMachine() throws {
        let (_, machines) = try makeMachines(1)
        let a = machines[0]
        try a.save([note("Shared", id: "shared", text: "both\n")])
        try a.sync()
        let laptop = a.path + "-laptop"
        try copy(a.path, to: laptop)
        let c = try open(laptop)
        try c.save([note("From laptop", id: "from-laptop", text: "c\n")])
        try c.sync()
        try a.save([note("From desk", id: "from-desk", text: "a\n")])
        let report = try a.sync()
        #expect(report.notices == [SyncEngine.copyNotice])
        try c.sync()
        #expect(try a.note("from-laptop").text == "c\n")
        #expect(try c.note("from-desk").text == "a\n")
        let ids = try [a, c].map { try #require(try SyncState.load(databasePath: $0.path)).clientID }
        #expect(ids[0] != ids[1])
        #expect(try a.contents() == c.contents())
    }

    @Test func aServerResetAndInitialisedAgainGetsEverythingBackAndNewSeqsReachEveryone() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([folder("Work", id: "work"), note("Plan", id: "plan", text: "one\n", folder: "work")])
        try b.save([note("B note", id: "bnote", text: "b\n")])
        try syncAll([a, b])
        #expect(a.has("bnote"))
        // The server's database is dropped and created again, and `sync init` run against it.
        let name = databaseName(server)
        let admin = try Connection(try cluster().conninfo())
        try admin.execute("DROP DATABASE \(name) WITH (FORCE)")
        try admin.execute("CREATE DATABASE \(name)")
        let initialize = try notesfs(a.path, ["sync", "init", server, "--no-encryption"])
        #expect(initialize.status == 0, "\(initialize.stderr)")
        let pending = try notesfs(a.path, ["sync", "status"])
        let run = try notesfs(a.path, ["sync"])
        #expect(run.status == 0, "\(run.stderr) \(pending.out)")
        #expect(run.stderr.contains("the server is not the one this database last synced with"), "\(run.stderr)")
        let rowsAfterReset = try serverRows(server)
        #expect(Set(rowsAfterReset.keys) == ["work", "plan", "bnote"], "\(rowsAfterReset) \(run.stderr)")
        try b.database.refresh()
        #expect(try b.sync().notices == [SyncEngine.newServerNotice])
        // A note made after the reset reaches the other machine (its seq is small again).
        try a.database.refresh()
        try a.save([note("After", id: "after", text: "new\n")])
        try syncAll([a, b])
        #expect(try b.note("after").text == "new\n")
        #expect(try a.contents() == b.contents())
        #expect(try b.notes().count == 3)
    }

    /// A server restored from its own backup hands out seqs this client has fetched past: the
    /// same epoch, but it is started over too.
    @Test func aServerWhoseSeqWentBackIsStartedOver() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Plan", id: "plan", text: "one\n")])
        try syncAll([a, b])
        try Connection(server).execute("DELETE FROM notesfs_records")
        try Connection(server).execute("SELECT setval('notesfs_seq', 1, false)")
        #expect(try a.sync().notices == [SyncEngine.newServerNotice])
        try b.save([note("New", id: "new", text: "n\n")])
        try syncAll([a, b])
        #expect(try a.note("new").text == "n\n")
        #expect(Set(try serverRows(server).keys) == ["plan", "new"])
    }

    @Test func setURLTakesANewStringForTheSameServerOnly() throws {
        let (server, machines) = try makeMachines(1)
        let a = machines[0]
        try a.save([note("Plan", id: "plan", text: "one\n")])
        try a.sync()
        let same = try notesfs(a.path, ["sync", "set-url", server + " application_name=renamed"])
        #expect(same.status == 0, "\(same.stderr)")
        let saved = try #require(try SyncState.load(databasePath: a.path))
        #expect(saved.server.contains("application_name=renamed") && !saved.server.contains(TestCluster.password), "\(saved.server)")
        #expect(saved.isServer(server + " application_name=renamed"))
        let other = try cluster().makeDatabase()
        _ = try Connection(other)  // exists
        #expect(try notesfs(a.path + "-other", ["sync", "init", other, "--no-encryption"]).status == 0)  // gives it a schema and an epoch
        let refused = try notesfs(a.path, ["sync", "set-url", other])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("is another server than the one this database syncs with"), "\(refused.stderr)")
        #expect(!refused.stderr.contains(TestCluster.password))
        let moved = try notesfs(a.path, ["sync", "set-url", other, "--other-server"])
        #expect(moved.status == 0, "\(moved.stderr)")
        try a.database.refresh()
        #expect(try a.sync().notices == [SyncEngine.newServerNotice])
        #expect(Set(try serverRows(other).keys) == ["plan"])
    }

    /// A long-running engine (a mount's) raises its generation at its first sync only, and still
    /// tells that a copy synced since when that copy did.
    @Test func aLongRunningEngineNoticesACopyThatSyncedSince() throws {
        let (_, machines) = try makeMachines(1)
        let a = machines[0]
        let engine = try SyncEngine(database: a.database)
        try a.save([note("Shared", id: "shared", text: "both\n")])
        try engine.sync()
        let generation = try #require(try SyncState.load(databasePath: a.path, includingRecords: false)).generation
        try a.save([note("Again", id: "again", text: "a\n")])
        #expect(try engine.sync().notices.isEmpty)
        #expect(try SyncState.load(databasePath: a.path, includingRecords: false)?.generation == generation)
        let laptop = a.path + "-laptop"
        try copy(a.path, to: laptop)
        let c = try open(laptop)
        try c.save([note("From laptop", id: "from-laptop", text: "c\n")])
        try c.sync()
        #expect(try engine.sync().notices == [SyncEngine.copyNotice])
        #expect(try a.note("from-laptop").text == "c\n")
    }
}

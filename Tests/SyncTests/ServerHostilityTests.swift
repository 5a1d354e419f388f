import Foundation
import Notes
import Postgres
import RecordStore
import TestSupport
import Testing

@testable import Sync

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A server that refuses or breaks a sync: each failure is a clear message in `notesfs sync` and
/// `notesfs sync status` (and ``SyncStatus/lastError``), nothing local is lost or marked pushed, and
/// once the hostility ends a sync succeeds and the machines converge. (A wrong password is
/// ``SyncCommandTests/aWrongPasswordIsReportedBySyncAndStatus()``.)
@Suite(.tags(.postgres), .needsPostgres) struct ServerHostilityTests {
    func admin() throws -> Connection { try Connection(try cluster().conninfo()) }

    /// Checks what `sync status` and the library say after a failed sync: `expected` in both,
    /// and `pending` changes still to push.
    func expectFailureReported(_ machine: Machine, containing expected: String, pending: Int) throws {
        let status = try notesfs(machine.path, ["sync", "status"])
        #expect(status.out.contains("last error: "), "\(status.out)")
        #expect(status.out.contains(expected), "\(status.out)")
        #expect(status.out.contains("pending changes: \(pending)\n"), "\(status.out)")
        let library = try SyncStatus.read(database: machine.database)
        #expect(library?.lastError?.contains(expected) == true, "\(String(describing: library?.lastError))")
        #expect(library?.pendingChanges == pending)
    }

    /// After the hostility: one sync each way succeeds and both machines hold the same records.
    func expectRecovery(_ machines: [Machine], notes: Int) throws {
        let first = try notesfs(machines[0].path, ["sync"])
        #expect(first.status == 0, "\(first.stderr)")
        try syncAll(machines)
        for machine in machines {
            try machine.database.refresh()
            #expect(try machine.notes().count == notes)
            let status = try notesfs(machine.path, ["sync", "status"])
            #expect(!status.out.contains("last error"), "\(status.out)")
            #expect(status.out.contains("pending changes: 0\n"))
        }
        #expect(try machines[0].contents() == machines[1].contents())
    }

    @Test func aNewerServerSchemaIsRefused() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([folder("Work", id: "work"), note("Plan", id: "plan", text: "one\n", folder: "work")])
        try syncAll(machines)
        var plan = try a.note("plan")
        plan.text += "two\n"
        try a.save([plan.record, note("New", id: "new", text: "offline\n")])
        let rows = try serverRows(server)

        // A newer notesfs migrated the server.
        let newer = ServerSchema.version + 1
        try Connection(server).execute("UPDATE notesfs_schema SET version = $1", [String(newer)])
        let message = "the server's schema is version \(newer), this notesfs knows up to \(ServerSchema.version): upgrade notesfs"
        let run = try notesfs(a.path, ["sync"])
        #expect(run.status != 0)
        #expect(run.stderr.contains(message), "\(run.stderr)")
        try expectFailureReported(a, containing: message, pending: 3)  // plan, new, and the version plan's edit kept
        #expect(try serverRows(server).mapValues(\.seq) == rows.mapValues(\.seq))
        #expect(try a.note("plan").text == "one\ntwo\n" && a.has("new"))
        // `sync init` refuses it too (it would not downgrade the schema).
        let fresh = NSTemporaryDirectory() + "notesfs-hostile-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: fresh, withIntermediateDirectories: true)
        let initialize = try notesfs(fresh + "/db", ["sync", "init", server, "--no-encryption"])
        #expect(initialize.status != 0)
        #expect(initialize.stderr.contains(message), "\(initialize.stderr)")
        #expect(try Connection(server).execute("SELECT version FROM notesfs_schema").rows == [[String(newer)]])

        try Connection(server).execute("UPDATE notesfs_schema SET version = $1", [String(ServerSchema.version)])
        try expectRecovery([a, b], notes: 2)
        #expect(try b.note("plan").text == "one\ntwo\n")
    }

    @Test func aConnectionDroppedMidPushLosesNothing() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let count = 1000
        try a.save([folder("Work", id: "work")] + (0..<count).map { note("N\($0)", id: "n\($0)", text: "line \($0)\n", folder: "work") })
        // The push's third transaction stops at its hundredth row on a lock this test holds.
        let connection = try Connection(server)
        try holdInserts(into: "notesfs_records", when: "NEW.seq = 500", lock: 4242, on: connection)

        let errors = a.path + "-sync.stderr"
        let sync = try startNotesfs(a.path, ["sync"], errors: errors)
        defer { if sync.isRunning { kill(sync.processIdentifier, SIGKILL) } }
        let blocked = try backendWaitingOnAdvisoryLock(server, while: sync)
        let pid = try #require(blocked, "the push never reached the held row")
        // Mid-transaction: the rows this transaction wrote before the held one are not visible.
        let committed = try serverRows(server)
        #expect(!committed.isEmpty && committed.values.allSatisfy { $0.seq < 500 })
        try connection.execute("SELECT pg_terminate_backend($1::int)", [pid])
        sync.waitUntilExit()
        try connection.execute("SELECT pg_advisory_unlock(4242)")
        try connection.execute("DROP TRIGGER hold_notesfs_records ON notesfs_records")

        let message = try String(contentsOfFile: errors, encoding: .utf8)
        #expect(sync.terminationStatus != 0)
        let broke = "the connection broke during the sync: nothing local is lost"
        #expect(message.contains("server: ") && message.contains(broke), "\(message)")
        try expectFailureReported(a, containing: broke, pending: count + 1 - committed.count)
        #expect(try a.notes().count == count)
        #expect(try serverRows(server).count == committed.count)

        try expectRecovery([a, b], notes: count)
        #expect(try serverRows(server).count == count + 1)
    }

    /// An asset row gone from the server (a damaged or hand-edited server) sets its record aside,
    /// never a crash or a stop; once the owner pushes it again, the record arrives.
    @Test func anAssetMissingOnTheServerSetsItsRecordAside() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let asset = try a.database.makeAsset(Data("attached bytes".utf8))
        var attachment = Record(recordType: "Attachment", recordID: RecordID(recordName: "file"))
        attachment["data"] = .asset(asset)
        try a.save([attachment, note("Plan", id: "plan", text: "one\n")])
        try a.sync()
        try Connection(server).execute("DELETE FROM notesfs_assets")
        let run = try notesfs(b.path, ["sync"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("server record set aside: file: asset missing on the server"), "\(run.stderr)")
        try b.database.refresh()
        #expect(!b.has("file") && b.has("plan"))
        // The owner's next push of it uploads the asset again (a new version of the record).
        var again = try a.database.record(for: RecordID(recordName: "file"))
        again["name"] = .string("again")
        try a.save([again])
        try a.sync()
        try b.sync()
        #expect(try b.database.assetData(asset) == Data("attached bytes".utf8))
        #expect(try SyncState.load(databasePath: b.path)?.setAside.isEmpty == true)
    }

    @Test func aStatementTimeoutIsReportedAndRetried() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save((0..<50).map { note("N\($0)", id: "n\($0)", text: "line \($0)\n") })
        // Every statement of a new session may take 300 ms, and another session holds the push
        // lock: the push's first statement runs out of time.
        try admin().execute("ALTER DATABASE \(databaseName(server)) SET statement_timeout = '300ms'")
        let holder = try Connection(server)
        try holder.execute("SELECT pg_advisory_lock(\(ServerSchema.pushLock))")

        let run = try notesfs(a.path, ["sync"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("canceling statement due to statement timeout (SQLSTATE 57014)"), "\(run.stderr)")
        #expect(run.stderr.contains("ran out of time"), "\(run.stderr)")
        try expectFailureReported(a, containing: "statement timeout (SQLSTATE 57014) (the server cancelled", pending: 50)
        #expect(try serverRows(server).isEmpty)

        try holder.execute("SELECT pg_advisory_unlock(\(ServerSchema.pushLock))")
        try admin().execute("ALTER DATABASE \(databaseName(server)) RESET statement_timeout")
        try expectRecovery([a, b], notes: 50)
    }
}

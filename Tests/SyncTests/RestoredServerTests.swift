import Foundation
import Notes
import Postgres
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// A server restored from an older dump of itself (same epoch), with several machines: each
/// machine sees that the server lost its last syncs (its record of the machine's generation went
/// back) and reconciles as for a reset, so that all converge.
@Suite(.tags(.postgres), .needsPostgres) struct RestoredServerTests {
    static let tables = [
        "notesfs_records", "notesfs_assets", "notesfs_asset_chunks", "notesfs_pushes", "notesfs_clients", "notesfs_server",
    ]

    /// A dump of the server's tables (copies beside them); returns the sequence's last value.
    static func dump(_ connection: Connection) throws -> String {
        for table in tables { try connection.execute("CREATE TABLE bak_\(table) AS SELECT * FROM \(table)") }
        return try #require(try connection.execute("SELECT last_value FROM notesfs_seq").value(0, "last_value"))
    }

    /// The server as `dump` left it, its sequence at `seq`.
    static func restore(_ connection: Connection, seq: String) throws {
        for table in tables {
            try connection.execute("TRUNCATE \(table)")
            try connection.execute("INSERT INTO \(table) SELECT * FROM bak_\(table)")
        }
        try connection.execute("SELECT setval('notesfs_seq', $1::bigint)", [seq])
    }

    @Test func machinesConvergeAfterTheServerIsRestoredFromAnOlderDump() throws {
        let (server, machines) = try makeMachines(3)
        let (a, b, c) = (machines[0], machines[1], machines[2])
        try a.save([note("Plan", id: "plan", text: "old\n"), note("Doomed", id: "doomed", text: "d\n")])
        try syncAll(machines)
        let connection = try Connection(server)
        let seq = try Self.dump(connection)
        // Life goes on: a edits, b deletes, everyone syncs.
        var plan = try a.note("plan")
        plan.text = "new\n"
        try a.save([plan.record])
        try b.database.modify(deleting: [RecordID(recordName: "doomed")])
        try syncAll(machines)
        try Self.restore(connection, seq: seq)
        // c syncs first and pushes: the server's seq moves past what a and b fetched.
        try c.save([note("From C", id: "from-c", text: "c\n")])
        try c.sync()
        try syncAll(machines)
        try syncAll(machines)
        let contents = try machines.map { try $0.contents() }
        #expect(contents[0] == contents[1] && contents[1] == contents[2], "the machines differ")
        // Nothing lost: the edit made after the dump is in a note on every machine (the note
        // itself, or a conflict copy beside the dump's older text).
        for machine in machines { #expect(try machine.notes().contains { $0.text == "new\n" }) }
        #expect(!a.has("doomed") || (a.has("doomed") && b.has("doomed") && c.has("doomed")))
        #expect(b.has("from-c") && a.has("from-c"))
    }

    /// After a reset, a merge base is kept where the server's record matches it: a note edited here
    /// whose server version is the one this machine last synced merges cleanly (no conflict copy;
    /// where the server's differs, both are kept).
    @Test func anEditOfANoteTheServerStillHoldsAsSyncedIsNoConflictAfterAReset() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Keep", id: "keep", text: "one\ntwo\n"), note("Other", id: "other", text: "o\n")])
        try syncAll(machines)
        let connection = try Connection(server)
        let seq = try Self.dump(connection)
        try a.append("three\n", to: "other")
        try syncAll(machines)
        try Self.restore(connection, seq: seq)
        try b.append("edited on b\n", to: "keep")
        let report = try b.sync()
        #expect(report.notices == [SyncEngine.newServerNotice])
        #expect(!report.conflictCopies.contains { $0.recordName == "keep" }, "\(report.conflictCopies)")
        try syncAll(machines)
        #expect(try a.note("keep").text == "one\ntwo\nedited on b\n")
        #expect(try b.note("keep").text == "one\ntwo\nedited on b\n")
    }
}

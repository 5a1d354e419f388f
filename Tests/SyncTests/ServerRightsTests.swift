import Foundation
import Postgres
import TestSupport
import Testing

@testable import Sync

/// A server user without the rights sync needs, and a server whose schema was dropped: the error
/// says what to do.
@Suite(.tags(.postgres), .needsPostgres) struct ServerRightsTests {
    @Test func aSelectOnlyUserIsToldWhichRightsAreNeeded() throws {
        let (server, machines) = try makeMachines(1)
        let a = machines[0]
        try a.save([note("One", id: "one", text: "1\n")])
        try a.sync()
        let connection = try Connection(server)
        let role = "reader_" + UUID().uuidString.prefix(8).lowercased()
        try connection.execute("CREATE ROLE \(role) LOGIN PASSWORD 'readerpw'")
        try connection.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role)")
        try connection.execute("GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO \(role)")
        let readOnly = server.replacingOccurrences(of: "user=postgres", with: "user=\(role)")
            .replacingOccurrences(of: TestCluster.password, with: "readerpw")
        #expect(readOnly.contains("user=\(role)"), "\(readOnly)")
        let run = try notesfs(a.path, ["sync", "set-url", readOnly])
        #expect(run.status == 0, "\(run.stderr)")
        let sync = try notesfs(a.path, ["sync"])
        #expect(sync.status != 0)
        #expect(sync.stderr.contains("INSERT, UPDATE, DELETE"), "\(sync.stderr)")
        #expect(sync.stderr.contains("GRANT"), "\(sync.stderr)")
    }

    @Test func aDroppedSchemaSuggestsSyncInit() throws {
        let (server, machines) = try makeMachines(1)
        let a = machines[0]
        try a.save([note("One", id: "one", text: "1\n")])
        try a.sync()
        for table in [
            "notesfs_schema", "notesfs_records", "notesfs_assets", "notesfs_asset_chunks", "notesfs_pushes", "notesfs_server",
            "notesfs_clients",
        ] {
            try Connection(server).execute("DROP TABLE \(table)")
        }
        try Connection(server).execute("DROP SEQUENCE notesfs_seq")
        let sync = try notesfs(a.path, ["sync"])
        #expect(sync.status != 0)
        #expect(sync.stderr.contains("notesfs sync init"), "\(sync.stderr)")
        // Doing what it says works: the tables are made again and this database's note uploaded.
        let again = try notesfs(a.path, ["sync", "init", server, "--no-encryption"])
        #expect(again.status == 0, "\(again.stderr)")
        let next = try notesfs(a.path, ["sync"])
        #expect(next.status == 0, "\(next.stderr)")
        #expect(try serverRows(server)["one"] != nil)
    }
}

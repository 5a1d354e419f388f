import Foundation
import Notes
import Postgres
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// A server flooded with rows no notesfs can apply: the set-aside rows are kept compactly (the
/// first ones whole, the rest as a count per reason with a few names), state.json stays small,
/// and `sync status` prints a summary.
@Suite(.tags(.postgres), .needsPostgres) struct JunkFloodTests {
    /// NOTESFS_FLOOD_ROWS overrides it (the figures in docs were measured with 50,000).
    static let junkRows = ProcessInfo.processInfo.environment["NOTESFS_FLOOD_ROWS"].flatMap { Int($0) } ?? 20_000

    @Test func aFloodOfJunkRowsIsKeptAsASummary() throws {
        let (server, machines) = try makeMachines(1)
        let b = machines[0]
        let connection = try Connection(server)
        try connection.execute(
            """
            INSERT INTO notesfs_records
            SELECT 'junk-' || n, 'Note', nextval('notesfs_seq'), false, '{"fields":{"title":{"type":"int64","value":"1"}}}'::jsonb, 'forger/1'
            FROM generate_series(1, \(Self.junkRows)) AS n
            """)
        try connection.execute(
            """
            INSERT INTO notesfs_records VALUES ('good', 'Note', nextval('notesfs_seq'), false,
                '{"fields":{"title":{"type":"string","value":"Good"},"text":{"type":"string","value":"g"}}}'::jsonb, 'forger/1')
            """)
        let clock = ContinuousClock()
        var run = ProgramResult(status: 0, stdout: Data(), stderr: "")
        let first = try clock.measure { run = try notesfs(b.path, ["sync"]) }
        let second = try clock.measure { _ = try notesfs(b.path, ["sync"]) }
        let third = try clock.measure { _ = try notesfs(b.path, ["sync"]) }
        print("flood of \(Self.junkRows) rows: first sync \(first), later syncs \(second), \(third)")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count < 100, "sync printed \(run.stderr.split(separator: "\n").count) lines")
        try b.database.refresh()
        #expect(try b.note("good").text == "g")
        let stateSize = try FileManager.default.attributesOfItem(atPath: SyncState.path(forDatabase: b.path))[.size] as? Int ?? 0
        print("flood of \(Self.junkRows) rows: state.json \(stateSize) bytes")
        #expect(stateSize < 200_000, "state.json is \(stateSize) bytes")
        let state = try #require(try SyncState.load(databasePath: b.path))
        #expect(state.setAsideCount == Self.junkRows, "\(state.setAsideCount)")
        let status = try notesfs(b.path, ["sync", "status"])
        let lines = status.out.split(separator: "\n")
        #expect(lines.count < 100, "sync status printed \(lines.count) lines")
        #expect(status.out.contains("server records set aside: \(Self.junkRows)"), "\(status.out.prefix(2000))")
        // A later version of a set-aside row that is good applies, and leaves the count.
        try connection.execute(
            """
            UPDATE notesfs_records SET seq = nextval('notesfs_seq'),
                payload = '{"fields":{"title":{"type":"string","value":"Fixed"},"text":{"type":"string","value":"f"}}}'::jsonb
            WHERE record_name = 'junk-1'
            """)
        try b.sync()
        #expect(try b.note("junk-1").text == "f")
        let again = try #require(try SyncState.load(databasePath: b.path))
        #expect(again.setAsideCount == Self.junkRows - 1, "\(again.setAsideCount)")
    }
}

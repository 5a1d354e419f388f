import Foundation
import Notes
import Postgres
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// Many big notes on the server: a page brings at most ``ServerContainer/pageBytes`` of payloads
/// (one row at least), so the local commit that applies it, and its marker of merge bases, stay
/// far below what a record may hold (200 notes of 330 KB made one 75.6 MB marker before).
@Suite(.tags(.postgres), .needsPostgres) struct BigPageTests {
    @Test func twoHundredNotesOf330KBArriveWholeAndTheDatabaseStaysSound() throws {
        let (server, machines) = try makeMachines(1)
        let b = machines[0]
        try Connection(server).execute(
            """
            INSERT INTO notesfs_records
            SELECT 'big' || n, 'Note', nextval('notesfs_seq'), false,
                jsonb_build_object('fields', jsonb_build_object(
                    'title', jsonb_build_object('type', 'string', 'value', 'Big ' || n),
                    'text', jsonb_build_object('type', 'string', 'value', repeat('x', 330000)))), 'other/1'
            FROM generate_series(1, 200) AS n
            """)
        let report = try b.sync()
        #expect(report.setAside.isEmpty)
        #expect(report.fetched == 200)
        let notes = try b.notes()
        #expect(notes.count == 200 && notes.allSatisfy { $0.text.utf8.count == 330_000 })
        let marker = try b.database.record(for: RecordID(recordName: AppliedPageMarker.recordName))
        #expect((marker["bases"]?.stringValue?.utf8.count ?? .max) < 2 * ServerContainer.pageBytes + ServerContainer.payloadLimit)
        let fsck = try notesfs(b.path, ["fsck"])
        #expect(fsck.status == 0, "\(fsck.out)\(fsck.stderr)")
    }
}

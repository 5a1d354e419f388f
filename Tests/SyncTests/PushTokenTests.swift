import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// A push moves the server token past the client's own new versions when no other client's
/// change came between, so the next fetch does not bring them back; never past another's.
@Suite(.tags(.postgres), .needsPostgres) struct PushTokenTests {
    @Test func aPushDoesNotFetchItsOwnChangesBack() throws {
        let (server, machines) = try makeMachines(2)
        let a = machines[0]
        try a.save([folder("Work", id: "work")] + (0..<450).map { note("N\($0)", id: "n\($0)", text: "\($0)\n", folder: "work") })
        #expect(try a.sync().pushed == 451)
        // The saved token is already past A's own 451 versions (a fetch would read them all again).
        let top = try serverRows(server).values.map(\.seq).max()
        #expect(try SyncEngine(database: a.database).state.serverSeq == top)
        let next = try a.sync()
        #expect(next.fetched == 0)
        #expect(next.pushed == 0)
    }

    @Test func aPushNeverSkipsAnotherClientsChange() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Shared", id: "shared", text: "one\n")])
        try syncAll(machines)
        var shared = try a.note("shared")
        shared.text = "one\ntwo\n"
        try a.save([shared.record, note("From A", id: "fromA", text: "a\n")])
        // A fetches, then B pushes, then A pushes: B's version is after the seq A's fetch reached.
        let engine = try SyncEngine(database: a.database)
        var report = SyncReport()
        try engine.state.reload(databasePath: a.path)  // as sync() does
        try engine.pull(&report)
        try b.save([note("From B", id: "fromB", text: "b\n")])
        try b.sync()
        let seqOfB = try #require(try serverRows(server)["fromB"]?.seq)
        #expect(try engine.push(&report))
        #expect(engine.state.serverSeq < seqOfB)
        #expect(try a.sync().fetched == 1)
        #expect(a.has("fromB"))
        try syncAll(machines)
        #expect(try b.note("shared").text == "one\ntwo\n")
        #expect(b.has("fromA"))
        #expect(try a.contents() == b.contents())
    }
}

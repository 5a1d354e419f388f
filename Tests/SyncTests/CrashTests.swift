import Foundation
import Notes
import RecordStore
import Sync
import TestSupport
import Testing

/// The state file is saved only after the server transaction it records has committed: a crash
/// between the two (emulated by putting back the state files as they were before the sync) makes the
/// next sync push the same changes again, which the server takes as already done.
@Suite(.tags(.postgres), .needsPostgres) struct SyncCrashTests {

    @Test func aPushRepeatedAfterACrashWritesNothingTwice() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([folder("Work", id: "work")] + (0..<50).map { note("N\($0)", id: "n\($0)", text: "text \($0)\n", folder: "work") })
        let before = try SavedSyncState(a)
        try a.sync()
        let rowsAfterPush = try serverRows(server)
        // The crash: the server committed, the state file never heard of it.
        try before.restore()
        let report = try a.sync()
        #expect(report.pushed == 0)
        #expect(report.conflictCopies.isEmpty)
        #expect(try serverRows(server).mapValues(\.seq) == rowsAfterPush.mapValues(\.seq))
        try syncAll(machines)
        #expect(try b.notes().count == 50)
        #expect(try a.notes().count == 50)
        #expect(try a.contents() == b.contents())
    }

    @Test func aPullRepeatedAfterACrashMakesNoConflict() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save((0..<20).map { note("N\($0)", id: "n\($0)", text: "text \($0)\n") })
        try a.sync()
        let before = try SavedSyncState(b)
        try b.sync()
        // The crash: the pulled records are in b's database, the state file never heard of them.
        try before.restore()
        let report = try b.sync()
        #expect(report.conflictCopies.isEmpty)
        try syncAll(machines)
        #expect(try b.notes().count == 20)
        #expect(try a.notes().count == 20)
        #expect(try a.contents() == b.contents())
    }

    @Test func aDeleteRepeatedAfterACrashIsIdempotent() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Gone", id: "gone"), note("Kept", id: "kept")])
        try syncAll(machines)
        try a.database.modify(deleting: [RecordID(recordName: "gone")])
        let before = try SavedSyncState(a)
        try a.sync()
        let rows = try serverRows(server)
        try before.restore()
        #expect(try a.sync().pushed == 0)
        #expect(try serverRows(server).mapValues(\.seq) == rows.mapValues(\.seq))
        try syncAll(machines)
        #expect(!b.has("gone") && b.has("kept"))
    }
}

import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// A record `fsck --repair` drops for local damage is the server's still: the next sync fetches
/// it again instead of deleting it everywhere.
@Suite(.tags(.postgres), .needsPostgres) struct RepairRefetchTests {
    @Test func aRecordDroppedByRepairIsFetchedAgainNotDeleted() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let marker = "unique-marker-" + UUID().uuidString
        let text = marker + "\n" + String(repeating: "long line of the big note\n", count: 20_000)
        try a.save([note("Big", id: "big", text: text), note("Small", id: "small", text: "s\n")])
        try a.sync()
        try b.sync()
        // Damage the big note's record file on a (its index entry leaves the text out, so the
        // repair cannot write it again from the index: it drops the record).
        try a.database.checkpoint()  // the journal no longer holds the text: the file is all there is
        let found = try run("/usr/bin/grep", ["-rl", marker, a.path + "/records"], mergingErrors: true)
        let file = try #require(found.out.split(separator: "\n").first.map(String.init), "\(found.out)")
        try Data("{ damaged".utf8).write(to: URL(fileURLWithPath: file))
        let repair = try notesfs(a.path, ["fsck", "--repair"])
        #expect(repair.out.contains("big") || repair.stderr.contains("big"), "\(file): \(repair.out)\(repair.stderr)")
        let sync = try notesfs(a.path, ["sync"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try serverRows(server)["big"]?.deleted == false, "the repair's drop was pushed as a delete")
        try a.database.refresh()
        #expect(try a.note("big").text == text)
        try b.sync()
        #expect(try b.note("big").text == text)
        #expect(try notesfs(a.path, ["fsck"]).status == 0)
    }
}

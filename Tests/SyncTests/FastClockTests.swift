import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// A machine whose clock runs a day ahead no longer wins every rename: concurrent metadata changes
/// are ordered by when they reached the server, and the message names the note by its path.
@Suite(.tags(.postgres), .needsPostgres) struct FastClockTests {
    @Test func aRenameFromAFastClockDoesNotBeatALaterOne() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Plan", id: "plan", text: "text\n")])
        try syncAll(machines)
        var fast = try a.note("plan")
        fast.title = "Fast clock"
        var record = fast.record
        record.modificationDate = Date().addingTimeInterval(86_400)
        try a.save([record])
        try a.sync()
        var later = try b.note("plan")
        later.title = "Later rename"
        try b.save([later.record])
        let run = try notesfs(b.path, ["sync"])
        #expect(run.status == 0, "\(run.stderr)")
        try a.sync()
        try b.database.refresh()
        #expect(try a.note("plan").title == "Later rename")
        #expect(try b.note("plan").title == "Later rename")
        let told = run.out + run.stderr
        #expect(told.contains("Later rename.md"), "\(told)")
        #expect(!told.contains("of plan:"), "\(told)")
    }
}

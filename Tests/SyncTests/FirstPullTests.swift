import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// Ordinary life: a new machine's first pull, page by page, of notes whose folder was renamed
/// after them (so the folder's version comes on a later page).
@Suite(.tags(.postgres), .needsPostgres) struct FirstPullTests {
    @Test func aFolderRenamedAfterItsNotesNeverStrandsThemInRecovered() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([folder("Fo", id: "fo")] + (0..<250).map { note("N\($0)", id: "n\($0)", text: "\($0)\n", folder: "fo") })
        try a.sync()
        var renamed = try Folder(record: a.database.record(for: RecordID(recordName: "fo")))
        renamed.name = "Fo2"
        try a.save([renamed.record])
        try a.sync()

        let engine = try SyncEngine(database: b.database)
        engine.batchSize = 50
        let report = try engine.sync()
        #expect(report.pushed == 0, "the first pull pushed moves it made itself")
        #expect(!b.has(SyncEngine.recoveredFolderName))
        let notes = try b.notes()
        #expect(notes.count == 250)
        #expect(notes.allSatisfy { $0.folder?.recordName == "fo" })
        #expect(try Folder(record: b.database.record(for: RecordID(recordName: "fo"))).name == "Fo2")
        try a.sync()
        #expect(!a.has(SyncEngine.recoveredFolderName))
    }
}

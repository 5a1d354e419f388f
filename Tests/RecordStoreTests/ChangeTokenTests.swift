import Foundation
import Synchronization
import TestSupport
import Testing

@testable import RecordStore

@Suite struct ChangeTokenTests {
    @Test func changesSinceATokenAndObservers() throws {
        let path = makeTemporaryDirectory("changes")
        let db = try makeDatabase(path)
        let seen = Mutex<[RecordStoreChange]>([])
        db.addObserver { change in seen.withLock { $0.append(change) } }
        try db.modify(saving: [note("a", folder: nil), note("b", folder: nil)])
        let token = db.currentToken
        try db.modify(saving: [note("c", folder: nil)], deleting: [RecordID(recordName: "a")])
        let changes = try db.changes(since: token)
        #expect(changes.changed.map(\.recordID.recordName) == ["c"])
        #expect(changes.deleted == [RecordID(recordName: "a")])
        #expect(try db.changes(since: changes.token).changed.isEmpty)
        #expect(seen.withLock { $0.count } == 2)
        #expect(seen.withLock { $0.last?.deleted.map(\.recordID.recordName) } == ["a"])
        #expect(seen.withLock { $0.allSatisfy { !$0.isExternal } })
        // Another handle's commit reaches this observer as external.
        let other = try makeDatabase(path)
        try other.modify(saving: [note("d", folder: nil)])
        try db.refresh()
        #expect(seen.withLock { $0.last?.isExternal } == true)
        #expect(seen.withLock { $0.last?.saved.map(\.recordID.recordName) } == ["d"])
        // Round trip of the token's text, and foreign tokens are refused.
        #expect(ChangeToken(stringValue: token.stringValue) == token)
        #expect(throws: RecordStoreError.changeTokenExpired) {
            try db.changes(since: ChangeToken(stringValue: "other-db:3")!)
        }
    }

    @Test func deletesSinceATokenSurviveACheckpointAndAReopen() throws {
        let path = makeTemporaryDirectory("tombstones")
        let db = try makeDatabase(path)
        try db.modify(saving: [folder("f"), note("a", folder: "f", text: String(repeating: "text ", count: 100)), note("b", folder: nil)])
        let token = db.currentToken
        try db.modify(deleting: [RecordID(recordName: "f"), RecordID(recordName: "b")])  // a goes with f
        try db.checkpoint()  // the tombstones now live in the index file
        let reopened = try makeDatabase(path)
        let changes = try reopened.changes(since: token)
        #expect(changes.deleted == ["a", "b", "f"].map { RecordID(recordName: $0) })
        #expect(changes.changed.isEmpty)
    }

    /// A mass delete's tombstones are written into the index file at the checkpoint and all read back.
    @Test(.tags(.slow), .notInFastRuns) func theTombstonesOfAMassDeleteReadBackFromTheIndexFile() throws {
        let path = makeTemporaryDirectory("many-tombstones")
        let db = try makeDatabase(path)
        let names = (0..<12_000).map { String(format: "%05d-", $0) + String(repeating: "n", count: 120) }
        try db.modify(saving: names.map { note($0, folder: nil) })
        let token = db.currentToken
        try db.modify(deleting: names.map { RecordID(recordName: $0) })
        try db.checkpoint()
        #expect(db.state.withLock { $0.index.tombstones.isEmpty && $0.index.entries.base?.tombstones(after: 0).count == 12_000 })
        try db.close()
        let reopened = try makeDatabase(path)
        defer { try? reopened.close() }
        let changes = try reopened.changes(since: token)
        #expect(changes.deleted.map(\.recordName).sorted() == names)
        #expect(reopened.recordCount == 0)
    }
}

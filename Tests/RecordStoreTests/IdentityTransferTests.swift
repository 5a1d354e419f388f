/// `Record.takeIdentity`: a saved record takes over the identity of a record deleted in the same
/// modify (a filesystem's rename over an existing file), durably; anything else is refused.

import Foundation
import TestSupport
import Testing

@testable import RecordStore

@Suite struct IdentityTransferTests {
    private func two(_ db: RecordDatabase) throws -> (target: Record, source: Record) {
        let saved = try db.modify(saving: [
            Record(recordType: "Thing", recordID: RecordID(recordName: "target")),
            Record(recordType: "Thing", recordID: RecordID(recordName: "source")),
        ]).savedRecords
        return (saved[0], saved[1])
    }

    @Test func aSavedRecordTakesTheIdentityOfOneDeletedInTheSameModifyAndKeepsItAfterReopen() throws {
        let path = makeTemporaryDirectory()
        let db = try makeDatabase(path)
        let (target, source) = try two(db)
        let (oldTarget, moved) = (try #require(target.identity), try #require(source.identity))
        #expect(oldTarget != moved)
        var record = target
        record["content"] = "the source's"
        record.takeIdentity(moved)
        let saved = try db.modify(saving: [record], deleting: [source.recordID]).savedRecords[0]
        #expect(saved.identity == moved)
        #expect(saved.recordID.recordName == "target")
        #expect(saved.creationDate == target.creationDate)
        #expect(db.metadata(identity: moved)?.recordID.recordName == "target")
        #expect(db.metadata(identity: oldTarget) == nil)
        // A later save keeps the taken identity.
        var again = saved
        again["content"] = "edited"
        #expect(try db.modify(saving: [again]).savedRecords[0].identity == moved)
        try db.close()
        // From the journal, then from a checkpoint's snapshot.
        let reopened = try makeDatabase(path)
        #expect(reopened.metadata(identity: moved)?.recordID.recordName == "target")
        #expect(reopened.metadata(identity: oldTarget) == nil)
        try reopened.checkpoint()
        try reopened.close()
        let fromSnapshot = try makeDatabase(path)
        #expect(fromSnapshot.metadata(identity: moved)?.recordID.recordName == "target")
        #expect(fromSnapshot.metadata(identity: oldTarget) == nil)
        #expect(try fromSnapshot.record(for: RecordID(recordName: "target"))["content"] == "edited")
    }

    @Test func anIdentityNotDeletedInThatModifyIsRefusedAndNothingChanges() throws {
        let db = try makeDatabase()
        let (target, source) = try two(db)
        let other = try db.modify(saving: [Record(recordType: "Thing", recordID: RecordID(recordName: "other"))]).savedRecords[0]
        var record = target
        record.takeIdentity(try #require(source.identity))
        // The source lives on: refused.
        #expect(throws: RecordStoreError.self) { try db.modify(saving: [record]) }
        // Another record is deleted, not the one whose identity is taken: refused.
        #expect(throws: RecordStoreError.self) { try db.modify(saving: [record], deleting: [other.recordID]) }
        // A new record cannot take one either.
        var fresh = Record(recordType: "Thing", recordID: RecordID(recordName: "fresh"))
        fresh.takeIdentity(try #require(source.identity))
        #expect(throws: RecordStoreError.self) { try db.modify(saving: [fresh], deleting: [source.recordID]) }
        #expect(db.metadata(identity: try #require(source.identity))?.recordID.recordName == "source")
        #expect(db.metadata(identity: try #require(target.identity))?.recordID.recordName == "target")
        #expect(db.metadata(identity: try #require(other.identity))?.recordID.recordName == "other")
    }
}

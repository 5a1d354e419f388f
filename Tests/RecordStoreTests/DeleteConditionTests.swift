import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// ``DeleteCondition``: a delete checked at commit time against every process's commits.
@Suite struct DeleteConditionTests {
    @Test func aDeleteOfARecordChangedByAnotherProcessFails() throws {
        let path = makeTemporaryDirectory()
        let mine = try makeDatabase(path)
        let seen = try mine.modify(saving: [note("n", folder: nil, text: "v1")]).savedRecords[0]
        let other = try makeDatabase(path)
        var edited = try other.record(for: seen.recordID)
        edited["text"] = .string("v2")
        try other.modify(saving: [edited])
        // `mine` has not caught up: the tag it holds is the old one, and the commit checks the new.
        #expect(throws: RecordStoreError.self) {
            try mine.modify(
                deleting: [seen.recordID], deleteConditions: [seen.recordID: DeleteCondition(recordChangeTag: seen.recordChangeTag)])
        }
        #expect(try mine.record(for: seen.recordID)["text"]?.stringValue == "v2")
        let current = try mine.record(for: seen.recordID)
        try mine.modify(
            deleting: [seen.recordID], deleteConditions: [seen.recordID: DeleteCondition(recordChangeTag: current.recordChangeTag)])
        #expect(throws: RecordStoreError.unknownItem(seen.recordID)) { try other.record(for: seen.recordID) }
    }

    @Test func aDeleteThatRefusesCascadeFailsOnAFolderFilledElsewhere() throws {
        let path = makeTemporaryDirectory()
        let mine = try makeDatabase(path)
        try mine.modify(saving: [folder("f"), note("loose", folder: nil)])
        let other = try makeDatabase(path)
        try other.modify(saving: [note("inside", folder: "f")], deleting: [RecordID(recordName: "loose")])
        let condition = [RecordID(recordName: "f"): DeleteCondition(refusesCascade: true)]
        #expect(throws: RecordStoreError.self) { try mine.modify(deleting: [RecordID(recordName: "f")], deleteConditions: condition) }
        #expect(try mine.record(for: RecordID(recordName: "inside"))["title"] != nil)
        // Emptied again, the same delete goes through.
        try mine.modify(deleting: [RecordID(recordName: "inside")])
        try mine.modify(deleting: [RecordID(recordName: "f")], deleteConditions: condition)
        #expect(throws: RecordStoreError.unknownItem(RecordID(recordName: "f"))) { try other.record(for: RecordID(recordName: "f")) }
    }

    @Test func aConditionOnARecordNotDeletedIsRefused() throws {
        let db = try makeDatabase()
        try db.modify(saving: [note("a", folder: nil), note("b", folder: nil)])
        #expect(throws: RecordStoreError.self) {
            try db.modify(deleting: [RecordID(recordName: "a")], deleteConditions: [RecordID(recordName: "b"): DeleteCondition()])
        }
        #expect(try db.record(for: RecordID(recordName: "a"))["title"] != nil)
    }
}

import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// ``RecordDatabase/forEachMetadata(ofType:_:)`` visits each live record once, as the index
/// holds it: the index file's rows the journal did not change since, then what it changed.
@Suite struct ForEachMetadataTests {
    /// Every record's metadata by name, as a scan visits it (a name twice fails).
    static func visited(_ db: RecordDatabase, ofType recordType: String? = nil) -> [String: RecordMetadata] {
        var seen: [String: RecordMetadata] = [:]
        db.forEachMetadata(ofType: recordType) { metadata in
            #expect(seen.updateValue(metadata, forKey: metadata.recordID.recordName) == nil, "\(metadata.recordID.recordName) twice")
        }
        return seen
    }

    @Test func eachLiveRecordIsVisitedOnceInTheFileAndTheJournal() throws {
        let db = try makeDatabase()
        try db.modify(saving: [folder("f"), folder("g")] + (0..<50).map { note("n\($0)", folder: $0 % 2 == 0 ? "f" : "g") })
        try db.checkpoint()  // these in the index file
        // After it: saved again (shadowing their rows), deleted, new.
        var changed = try db.record(for: RecordID(recordName: "n2"))
        changed["title"] = .string("changed")
        try db.modify(saving: [changed, note("new", folder: "f")], deleting: [RecordID(recordName: "n6"), RecordID(recordName: "g")])

        // Looked up one name at a time, not by a scan.
        var expected: [String: RecordMetadata] = [:]
        for name in ["f", "g", "new"] + (0..<50).map({ "n\($0)" }) { expected[name] = db.metadata(for: RecordID(recordName: name)) }
        #expect(Self.visited(db) == expected)
        let notes = Self.visited(db, ofType: "Note")
        #expect(notes == expected.filter { $0.value.recordType == "Note" })
        // Deleting g deleted its notes (the odd ones); n6 was deleted; new came.
        #expect(notes.count == 25 - 1 + 1 && notes["n6"] == nil && notes["n1"] == nil && notes["new"] != nil)
        if case .string(let title)? = notes["n2"]?.field("title") { #expect(title == "changed") } else { Issue.record("n2 has no title") }
        #expect(Self.visited(db, ofType: "Folder").keys.sorted() == ["f"])
        #expect(db.metadata(ofType: "Note") { $0.recordID.recordName.hasPrefix("n1") }.count == 5)  // n10 … n18, the even ones
    }
}

import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// The store commits nothing it could not read back (``Record/validityProblem``), and its
/// decoders refuse the same values, without recursing on what the input nests.
@Suite struct UnstorableValueTests {
    static func nested(_ depth: Int) -> FieldValue {
        var value = FieldValue.string("leaf")
        for _ in 0..<depth { value = .list([value]) }
        return value
    }

    /// By name (a test argument is described, and describing an infinite `Date` traps in Foundation).
    static let unstorable: [String: FieldValue] = [
        "path as asset hash": .asset(Asset(sha256: "../../../../etc/passwd", size: 11)),
        "upper-case hash": .asset(Asset(sha256: String(repeating: "A", count: 64), size: 1)),
        "negative asset size": .asset(Asset(sha256: String(repeating: "a", count: 64), size: -1)),
        "infinite date": .date(Date(timeIntervalSince1970: .infinity)),
        "NaN date": .date(Date(timeIntervalSince1970: .nan)),
        "empty reference": .reference(Reference(recordID: RecordID(recordName: ""), action: .none)),
        "deep list": nested(FieldValue.maximumListDepth + 1),
        "hash in a list": .list([.asset(Asset(sha256: "x", size: 1))]),
    ]

    @Test(arguments: unstorable.keys.sorted()) func aValueThatCannotBeReadBackIsRefusedAndNothingCommitted(_ name: String) throws {
        let value = try #require(Self.unstorable[name])
        let path = makeTemporaryDirectory("unstorable")
        let db = try makeDatabase(path)
        try db.modify(saving: [note("before", folder: nil, text: "kept")])
        var record = Record(recordType: "Note", recordID: RecordID(recordName: "bad"))
        record["value"] = value
        #expect(throws: RecordStoreError.self, "\(name)") { try db.modify(saving: [record, note("with-it", folder: nil, text: "x")]) }
        #expect(db.metadata(for: RecordID(recordName: "with-it")) == nil)
        try db.modify(saving: [note("after", folder: nil, text: "also kept")])
        let reopened = try makeDatabase(path)
        #expect(try reopened.record(for: RecordID(recordName: "after"))["text"] == .string("also kept"))
        #expect(try reopened.record(for: RecordID(recordName: "before"))["text"] == .string("kept"))
        #expect(try reopened.check().problems.isEmpty)
    }

    @Test func theDeepestListAllowedIsStoredAndReadBack() throws {
        let path = makeTemporaryDirectory("deep")
        let db = try makeDatabase(path)
        var record = Record(recordType: "Note", recordID: RecordID(recordName: "deep"))
        record["value"] = Self.nested(FieldValue.maximumListDepth)
        try db.modify(saving: [record])
        #expect(try makeDatabase(path).record(for: record.recordID)["value"] == Self.nested(FieldValue.maximumListDepth))
    }

    @Test func aRecordDateOutOfRangeIsRefused() throws {
        let db = try makeDatabase()
        var record = note("n", folder: nil, text: "x")
        record.modificationDate = Date(timeIntervalSince1970: -.infinity)
        #expect(throws: RecordStoreError.self) { try db.modify(saving: [record]) }
    }

    /// Record JSON as a damaged or hostile file holds it: each is an error, never a crash, however
    /// deep it nests (100,000 levels would overflow the stack of a recursive reader).
    @Test(arguments: [
        #"{"type":"list","value":"# + String(repeating: #"[{"type":"list","value":"#, count: 100_000) + "[]"
            + String(repeating: "}]", count: 100_000) + "}",
        String(repeating: #"{"type":"list","value":["#, count: FieldValue.maximumListDepth + 1)
            + String(repeating: "]}", count: FieldValue.maximumListDepth + 1),
        #"{"type":"asset","value":{"sha256":"../../etc/passwd","size":11}}"#,
        #"{"type":"date","value":"Infinity"}"#,
    ])
    func theDecodersRefuseWhatModifyRefuses(_ field: String) {
        let json = #"{"recordName":"n","recordType":"Note","fields":{"f":"# + field + "}}"
        #expect(throws: RecordDecodingError.self) { try RecordCoding.decode(Data(json.utf8)) }
        #expect(throws: (any Error).self) {
            let tree = try JSON.parse(Data(json.utf8))
            return try RecordCoding.decode(tree)
        }
    }

    @Test func aRecordOverTheFileLimitIsRefusedWithItsSize() throws {
        let db = try makeDatabase()
        let text = String(repeating: "x", count: DatabaseLayout.recordFileLimit)
        #expect {
            try db.modify(saving: [note("big", folder: nil, text: text)])
        } throws: { error in
            guard case .recordTooLarge(let id, let size, let limit) = error as? RecordStoreError else { return false }
            return id.recordName == "big" && size > limit && limit == DatabaseLayout.recordFileLimit
        }
        #expect(db.metadata(for: RecordID(recordName: "big")) == nil)
    }
}

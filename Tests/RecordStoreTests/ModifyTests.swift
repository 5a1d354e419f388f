import Foundation
import TestSupport
import Testing

@testable import RecordStore

@Suite struct ModifyTests {
    @Test func everyFieldTypeReadsBackExactly() throws {
        let path = makeTemporaryDirectory()
        let db = try makeDatabase(path)
        let asset = try db.makeAsset(Data([0, 1, 2, 255]))
        var r = Record(recordType: "Thing", recordID: RecordID(recordName: "t1"))
        r["s"] = "héllo \"quoted\" \\ \n\t\u{0}end"
        r["i"] = .int64(Int64.min)
        r["j"] = .int64(Int64.max)
        r["d"] = .double(0.1 + 0.2)
        r["nan"] = .double(.infinity)
        r["b"] = true
        r["date"] = .date(Date(timeIntervalSince1970: 1_234_567_890.5))
        r["bytes"] = .bytes(Data((0..<300).map { UInt8($0 % 256) }))
        r["asset"] = .asset(asset)
        r["list"] = .list([.int64(1), .string("two"), .list([.bool(false)])])
        r["long"] = .string(String(repeating: "x", count: 5000))
        let saved = try db.modify(saving: [r]).savedRecords[0]
        #expect(saved.recordChangeTag != nil)
        #expect(saved.identity! >= 16)
        // Read back through a fresh open (from disk, not memory).
        let reopened = try makeDatabase(path)
        let back = try reopened.record(for: r.recordID)
        #expect(back.fields == r.fields)
        #expect(try reopened.assetData(asset) == Data([0, 1, 2, 255]))
        #expect(back.identity == saved.identity)
        #expect(back.recordChangeTag == saved.recordChangeTag)
        // The record file is plain JSON that jq-style tools read.
        let file = try Data(contentsOf: URL(fileURLWithPath: path + "/" + RecordFileName.relativePath(for: "t1")))
        let object = try JSONSerialization.jsonObject(with: file) as? [String: Any]
        #expect(object?["recordName"] as? String == "t1")
    }

    @Test func folderCascadeDeletesWholeSubtreeInOneModify() throws {
        let db = try makeDatabase()
        var attachment = Record(recordType: "Attachment", recordID: RecordID(recordName: "att"))
        attachment["folder"] = .reference(Reference(recordID: RecordID(recordName: "sub"), action: .deleteSelf))
        var loose = Record(recordType: "Link", recordID: RecordID(recordName: "link"))
        loose["target"] = .reference(Reference(recordID: RecordID(recordName: "n1"), action: .none))
        try db.modify(saving: [
            folder("top"), folder("sub", parent: "top"), folder("subsub", parent: "sub"), folder("other"),
            note("n1", folder: "top"), note("n2", folder: "sub"), note("n3", folder: "subsub"), note("keep", folder: "other"),
            attachment, loose,
        ])
        let before = db.currentToken
        let result = try db.modify(deleting: [RecordID(recordName: "top")])
        #expect(Set(result.deletedRecordIDs.map(\.recordName)) == ["top", "sub", "subsub", "n1", "n2", "n3", "att"])
        for name in ["top", "sub", "subsub", "n1", "n2", "n3", "att"] {
            #expect(db.metadata(for: RecordID(recordName: name)) == nil)
        }
        #expect(db.metadata(for: RecordID(recordName: "keep")) != nil)
        #expect(db.metadata(for: RecordID(recordName: "link")) != nil, ".none references do not cascade")
        // One commit: the change token moved by exactly one step.
        let changes = try db.changes(since: before)
        #expect(changes.deleted.count == 7)
        #expect(changes.token.seq == before.seq + 1)
        // The dangling .none reference is reported by check().
        let report = try db.check()
        #expect(report.problems == [.danglingReference(from: RecordID(recordName: "link"), key: "target", to: RecordID(recordName: "n1"))])
    }

    @Test func aFailingRecordLeavesNothingApplied() throws {
        let db = try makeDatabase()
        try db.modify(saving: [folder("f"), note("a", folder: "f", text: "original"), note("a2", folder: nil)])
        let token = db.currentToken
        var changed = try db.record(for: RecordID(recordName: "a"))
        changed["text"] = "changed"
        let bad = note("bad", folder: "missing-folder")
        #expect(
            throws: RecordStoreError.invalidReference(
                from: RecordID(recordName: "bad"), key: "folder", to: RecordID(recordName: "missing-folder"))
        ) {
            try db.modify(saving: [changed, folder("g"), bad], deleting: [RecordID(recordName: "a2")])
        }
        #expect(try db.record(for: RecordID(recordName: "a"))["text"] == "original")
        #expect(db.metadata(for: RecordID(recordName: "g")) == nil)
        #expect(db.metadata(for: RecordID(recordName: "f")) != nil)
        #expect(db.metadata(for: RecordID(recordName: "a2")) != nil)
        #expect(db.currentToken == token)
        // A save into a folder deleted in the same modify is refused too.
        #expect(throws: RecordStoreError.self) {
            try db.modify(saving: [note("late", folder: "f")], deleting: [RecordID(recordName: "f")])
        }
        #expect(throws: RecordStoreError.unknownItem(RecordID(recordName: "nope"))) {
            try db.modify(deleting: [RecordID(recordName: "nope")])
        }
        #expect(throws: RecordStoreError.invalidArguments("record a appears twice")) {
            try db.modify(saving: [changed], deleting: [RecordID(recordName: "a")])
        }
    }

    @Test func modificationDateIsSetOnSaveUnlessTheClientSetsIt() throws {
        let db = try makeDatabase()
        let saved = try db.modify(saving: [note("n", folder: nil)]).savedRecords[0]
        #expect(abs(saved.modificationDate!.timeIntervalSinceNow) < 60)
        var touched = saved
        touched.modificationDate = Date(timeIntervalSince1970: 981_173_106)
        let again = try db.modify(saving: [touched]).savedRecords[0]
        #expect(again.modificationDate == Date(timeIntervalSince1970: 981_173_106))
        #expect(again.creationDate == saved.creationDate)
        #expect(again.identity == saved.identity)
        #expect(again.recordChangeTag != saved.recordChangeTag)
    }
}

@Suite struct CodingTests {
    static let strings = [
        "plain", "line\nbreak", "tab\tand \"quotes\" and \\ backslash", "\\\"", "ends with backslash \\",
        "\u{1}\u{1f} controls", "emoji 🧪 and é", "\u{2028}", "", "\\n not a newline", String(repeating: "a\n", count: 5000),
    ]

    @Test func unicodeEscapesAndBadEscapes() throws {
        #expect(try JSON.parse(#""\ud83e\uddea \u00e9\n""#) == .string("🧪 é\n"))
        #expect(throws: JSONSyntaxError.self) { try JSON.parse(#""\ud83e alone""#) }
        #expect(throws: JSONSyntaxError.self) { try JSON.parse(#""\q""#) }
        #expect(throws: JSONSyntaxError.self) { try JSON.parse("\"unterminated") }
        let record = try RecordCoding.decode(
            Data(#"{"recordName":"\u0041","recordType":"T","fields":{"s":{"type":"string","value":"\ud83e\uddea"}}}"#.utf8))
        #expect(record.recordID.recordName == "A")
        #expect(record["s"] == .string("🧪"))
    }

    @Test(arguments: strings) func stringsRoundTripThroughTheRecordDecoder(_ text: String) throws {
        var r = Record(recordType: "T", recordID: RecordID(recordName: "r\n\"\\"))
        r["s"] = .string(text)
        r["l"] = .list([.string(text), .string(text)])
        let decoded = try RecordCoding.decode(Data(RecordCoding.encode(r)))
        #expect(decoded.fields == r.fields)
        #expect(decoded.recordID == r.recordID)
        let entry = JournalEntry(seq: 1, saves: [r], deletes: [RecordID(recordName: text.isEmpty ? "x" : text)])
        let line = entry.encodedLine()
        let back = try JournalEntry.decode(Data(line.dropLast()))
        #expect(back.saves.first?.fields == r.fields)
        #expect(back.encodedSaves?.first == RecordCoding.encode(r))
    }
}

@Suite struct ReservedIdentityTests {
    @Test func reservedIdentitiesAreUniqueAcrossHandlesAndSurviveReopen() throws {
        let path = makeTemporaryDirectory("reserve")
        let a = try makeDatabase(path)
        let b = try makeDatabase(path)
        var seen = Set<UInt64>()
        for _ in 0..<300 {
            #expect(seen.insert(try a.reserveIdentity()).inserted)
            #expect(seen.insert(try b.reserveIdentity()).inserted)
        }
        let identity = try a.reserveIdentity()
        var r = note("reserved", folder: nil)
        r.useReservedIdentity(identity)
        let saved = try a.modify(saving: [r]).savedRecords[0]
        #expect(saved.identity == identity)
        // A plain save after reopening never takes a reserved number.
        let reopened = try makeDatabase(path)
        let plain = try reopened.modify(saving: [note("plain", folder: nil)]).savedRecords[0]
        #expect(!seen.contains(plain.identity!))
        #expect(plain.identity != identity)
        // An identity in use, or never reserved, is refused.
        var clash = note("clash", folder: nil)
        clash.useReservedIdentity(identity)
        #expect(throws: RecordStoreError.self) { try reopened.modify(saving: [clash]) }
        var unreserved = note("unreserved", folder: nil)
        unreserved.useReservedIdentity(1_000_000_000)
        #expect(throws: RecordStoreError.self) { try reopened.modify(saving: [unreserved]) }
    }
}

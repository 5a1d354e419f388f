import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// The index's compact copies of records (``RecordMetadata``, whose small fields are a sorted
/// array, not a dictionary): the record rebuilt from one is the saved record minus its large
/// fields, read the same after a reopen, and its accessors agree with that record.
@Suite struct RecordMetadataTests {
    let longText = String(repeating: "a line of the note's text\n", count: 40)

    /// Records of 0, 1 and many fields, with lists, references, assets and large fields.
    func records(_ db: RecordDatabase) throws -> [Record] {
        let asset = try db.makeAsset(Data("attachment bytes".utf8))
        let other = try db.makeAsset(Data("other bytes".utf8))
        var empty = Record(recordType: "Empty", recordID: RecordID(recordName: "empty"))
        empty.modificationDate = Date(timeIntervalSince1970: 1_000)
        var one = Record(recordType: "One", recordID: RecordID(recordName: "one"))
        one["title"] = "only"
        var many = Record(recordType: "Many", recordID: RecordID(recordName: "many"))
        for i in 0..<12 { many["k\(String(i, radix: 16))"] = .int64(Int64(i * 7)) }
        many["flag"] = .bool(true)
        many["ratio"] = .double(0.25)
        many["when"] = .date(Date(timeIntervalSince1970: 1_234.5))
        many["blob"] = .bytes(Data([1, 2, 3]))
        many["tags"] = .list(["b", "a", "c"])
        many["folder"] = .reference(Reference(recordID: RecordID(recordName: "one"), action: .deleteSelf))
        many["links"] = .list([
            .reference(Reference(recordID: RecordID(recordName: "one"), action: .none)),
            .reference(Reference(recordID: RecordID(recordName: "empty"), action: .none)),
        ])
        many["content"] = .asset(asset)
        many["gallery"] = .list([.asset(asset), .asset(other)])
        many["text"] = .string(longText)
        var large = Record(recordType: "Large", recordID: RecordID(recordName: "large"))
        large["text"] = .string(longText)
        large["bigList"] = .list((0..<100).map { .int64(Int64($0)) })
        large["z"] = "small"
        return [empty, one, many, large]
    }

    /// `saved` without its large fields: what the index holds of it.
    func smallFields(of saved: Record) -> [String: FieldValue] {
        saved.fields.filter { RecordMetadata.isSmall($0.value) }
    }

    func expectMatches(_ metadata: RecordMetadata, _ saved: Record) {
        let record = metadata.record
        #expect(record.recordID == saved.recordID)
        #expect(record.recordType == saved.recordType)
        #expect(record.recordChangeTag == saved.recordChangeTag)
        #expect(record.identity == saved.identity)
        #expect(record.creationDate == saved.creationDate)
        #expect(record.modificationDate == saved.modificationDate)
        #expect(record.fields == smallFields(of: saved))
        let large = saved.fields.filter { !RecordMetadata.isSmall($0.value) }
        #expect(record.omittedSizes == large.mapValues(RecordMetadata.byteCount))
        #expect(record.isPartial == !large.isEmpty)
        #expect(record.changedKeys.isEmpty)

        // The accessors read what the rebuilt record holds.
        #expect(metadata.recordID == record.recordID)
        #expect(metadata.recordType == record.recordType)
        #expect(metadata.recordChangeTag == record.recordChangeTag)
        #expect(metadata.storedIdentity == record.identity)
        #expect(metadata.creationDate == record.creationDate)
        #expect(metadata.modificationDate == record.modificationDate)
        #expect(metadata.isPartial == record.isPartial)
        #expect(metadata.sizes == record.omittedSizes)
        for key in Set(saved.fields.keys).union(["missing", "", "zz", "a"]) {
            #expect(metadata.field(key) == record.fields[key], "field \(key) of \(saved.recordID)")
            #expect(metadata.field(key) == record[key])
            #expect(metadata.byteCount(of: key) == saved.fields[key].map(RecordMetadata.byteCount))
        }
        for key in ["recordName", "recordID", "recordType", "creationDate", "modificationDate", "recordChangeTag", "title", "nope"] {
            #expect(RecordDatabase.value(of: key, in: metadata) == RecordDatabase.value(of: key, in: record))
        }
        var references: [String] = []
        metadata.forEachReference { key, ref in references.append("\(key)->\(ref.recordID.recordName)/\(ref.action)") }
        var recordReferences: [String] = []
        record.forEachReference { key, ref in recordReferences.append("\(key)->\(ref.recordID.recordName)/\(ref.action)") }
        #expect(references.sorted() == recordReferences.sorted())
        #expect(metadata.assets.map(\.sha256).sorted() == record.assets.map(\.sha256).sorted())
    }

    @Test func theIndexHoldsEachSavedRecordMinusItsLargeFields() throws {
        let path = makeTemporaryDirectory("metadata")
        let db = try makeDatabase(path)
        let saved = try db.modify(saving: try records(db)).savedRecords
        #expect(saved.count == 4)
        for record in saved {
            let metadata = try #require(db.metadata(for: record.recordID))
            expectMatches(metadata, record)
        }
        let many = try #require(saved.first { $0.recordID.recordName == "many" })
        #expect(try #require(db.metadata(for: many.recordID)).assets.count == 3)
        #expect(try #require(db.metadata(for: many.recordID)).field("text") == nil)

        // Read back from the journal, then from the snapshot a checkpoint writes: the same metadata.
        let before = saved.map { db.metadata(for: $0.recordID) }
        let fromJournal = try makeDatabase(path)
        #expect(saved.map { fromJournal.metadata(for: $0.recordID) } == before)
        try db.checkpoint()
        let fromSnapshot = try makeDatabase(path)
        for record in saved {
            let metadata = try #require(fromSnapshot.metadata(for: record.recordID))
            expectMatches(metadata, record)
            #expect(metadata == db.metadata(for: record.recordID))
            #expect(metadata.hashValue == db.metadata(for: record.recordID)?.hashValue)
        }
        // The reference index, after saves and after a load: a reference in a list counts too.
        for reopened in [db, fromSnapshot] {
            func referrers(_ target: String, _ key: String) -> [String] {
                reopened.referrers(to: RecordID(recordName: target), key: key).map(\.recordID.recordName)
            }
            #expect(referrers("one", "folder") == ["many"])
            #expect(referrers("one", "links") == ["many"])
            #expect(referrers("empty", "links") == ["many"])
            #expect(referrers("empty", "folder").isEmpty)
        }
        #expect(try db.check().problems.isEmpty)
    }

    @Test func theOrderFieldsWereSetInDoesNotMatter() {
        var a = Record(recordType: "Note", recordID: RecordID(recordName: "n"))
        var b = a
        let keys = ["title", "folder", "a", "m", "b"]
        for key in keys { a[key] = .string(key) }
        for key in keys.reversed() { b[key] = .string(key) }
        let x = RecordMetadata(savedRecord: a, seq: 3)
        let y = RecordMetadata(savedRecord: b, seq: 3)
        #expect(x == y)
        #expect(x.hashValue == y.hashValue)
        #expect(x.record.fields == a.fields)
        var c = a
        c["m"] = "changed"
        #expect(RecordMetadata(savedRecord: c, seq: 3) != x)
        #expect(RecordMetadata(savedRecord: a, seq: 4) != x)
    }

    /// The notes of a folder hold its record name once: every reference to it is the same
    /// string storage, after saves (one commit and separate ones) and after a reopen that loads
    /// the snapshot and replays the journal. Equal values either way; this is about memory.
    @Test func referencesToOneRecordShareItsName() throws {
        let path = makeTemporaryDirectory()
        let folderName = UUID().uuidString  // 36 bytes: a heap string (short ones are inline)
        func storage(_ db: RecordDatabase, _ names: [String]) throws -> Set<UInt> {
            Set(
                try names.map { name in
                    var target = try #require(
                        db.metadata(for: RecordID(recordName: name))?.field("folder")?.referenceValue?.recordID.recordName)
                    #expect(target == folderName)
                    return target.withUTF8 { UInt(bitPattern: $0.baseAddress) }
                })
        }
        let notes = (0..<6).map { _ in UUID().uuidString }
        let db = try makeDatabase(path)
        try db.modify(saving: [folder(folderName)] + notes.prefix(3).map { note($0, folder: folderName) })
        for name in notes.dropFirst(3) { try db.modify(saving: [note(name, folder: folderName)]) }
        #expect(try storage(db, notes).count == 1)
        // Loaded whole (an index snapshot of an older version, read once to build the index file).
        var loaded = RecordIndex()
        for metadata in db.metadata(where: { _ in true }) { loaded.insert(metadata) }
        let addresses = notes.map { name -> UInt? in
            guard var target = loaded.entries[name]?.field("folder")?.referenceValue?.recordID.recordName else { return nil }
            return target.withUTF8 { UInt(bitPattern: $0.baseAddress) }
        }
        #expect(Set(addresses).count == 1 && addresses.first! != nil)
        try db.close()
    }

    /// A field value is no larger than a reference (a string and a byte): the index keeps
    /// millions of them (an unboxed asset made every value 32 bytes).
    @Test func aFieldValueTakesNoMoreThanAReference() {
        #expect(MemoryLayout<FieldValue>.size <= MemoryLayout<Reference>.size + 1)
        #expect(MemoryLayout<FieldValue>.stride <= 24)
    }

    /// The index holds one metadata per record: its system fields stored apart, not a whole
    /// `Record` (176 bytes with its save-time fields), take 128 bytes.
    @Test func aRecordsMetadataTakes128Bytes() {
        #expect(MemoryLayout<RecordMetadata>.stride <= 128)
    }

    /// Every system field reads back from the metadata as saved, the optional ones absent too.
    @Test func systemFieldsReadBackAsSaved() throws {
        var record = Record(recordType: "Note", recordID: RecordID(recordName: "n"))
        record["text"] = .string(String(repeating: "x", count: 1000))
        record["title"] = .string("t")
        let bare = RecordMetadata(savedRecord: record, seq: 3)
        #expect(bare.creationDate == nil && bare.modificationDate == nil && bare.storedIdentity == nil && bare.identity == 0)
        #expect(bare.recordChangeTag == nil && bare.seq == 3 && bare.isPartial && bare.sizes == ["text": 1000])
        #expect(bare.record.fields == ["title": .string("t")] && bare.record.omittedSizes == ["text": 1000])

        let db = try makeDatabase()
        defer { try? db.close() }
        let saved = try #require(try db.modify(saving: [record]).savedRecords.first)
        let metadata = try #require(db.metadata(for: saved.recordID))
        #expect(metadata.creationDate == saved.creationDate && metadata.creationDate != nil)
        #expect(metadata.modificationDate == saved.modificationDate && metadata.modificationDate != nil)
        #expect(metadata.storedIdentity == saved.identity && metadata.identity == saved.identity)
        #expect(metadata.recordChangeTag == saved.recordChangeTag && metadata.recordType == "Note")
        var full = metadata.record
        full["text"] = record["text"]
        #expect(full.fields == saved.fields)
    }
}

import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// `index.jsonl` (of versions before the index file, read once to build it) loaded block by block (parsed in the background, inserted in order) and decoded
/// straight into the index's compact metadata gives what the record decoder gives.
@Suite struct SnapshotLoadTests {
    /// A database of `count` notes in a few folders, checkpointed, and its `index.jsonl` as an
    /// older version wrote it.
    static func checkpointed(_ count: Int) throws -> RecordDatabase {
        let db = try makeDatabase()
        try db.modify(saving: (0..<5).map { folder("f\($0)") })
        try db.modify(
            saving: (0..<count).map { i in
                var r = note("n\(i)", folder: "f\(i % 5)", text: String(repeating: "text \(i) ", count: 40))
                r["rank"] = .int64(Int64(i))
                if i % 7 == 0 { r["tags"] = .list([.string("a\"b"), .string("é")]) }
                return r
            })
        try db.modify(deleting: [RecordID(recordName: "n3")])
        try db.checkpoint()
        let index = db.state.withLock { $0.index }
        _ = try Snapshot.write(index, generation: 1, to: db.layout.snapshot, temp: db.layout.temp + "/snapshot")
        return db
    }

    @Test(arguments: [64 << 10, 4 << 20]) func aSnapshotLoadsWholeInSmallBlocksAndInOne(_ blockSize: Int) throws {
        let db = try Self.checkpointed(600)
        let (index, header, bytes) = try #require(try Snapshot.load(from: db.layout.snapshot, blockSize: blockSize))
        #expect(bytes > 3 * (64 << 10))  // several blocks of the small size
        #expect(index.entries.count == db.recordCount)
        #expect(index.entries.count == 604)
        #expect(header.seq == index.seq)
        #expect(index.tombstones.map(\.recordID.recordName) == ["n3"])
        for (name, metadata) in index.entries {
            let live = try #require(db.metadata(for: RecordID(recordName: name)))
            #expect(metadata == live, "\(name)")
        }
        #expect(index.referrers["f1"]?["folder"]?.count == 120)
    }

    @Test func aDamagedLineInALaterBlockIsReportedWithItsOffset() throws {
        let db = try Self.checkpointed(600)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: db.layout.snapshot))
        // Break a line well past the first block of 64 KiB.
        let lineStart = try #require(bytes[(200 << 10)...].firstIndex(of: 0x0A)) + 1
        bytes[lineStart] = UInt8(ascii: "x")
        try bytes.write(to: URL(fileURLWithPath: db.layout.snapshot))
        #expect {
            _ = try Snapshot.load(from: db.layout.snapshot, blockSize: 64 << 10)
        } throws: { error in
            guard case .damagedRecord(_, _, let reason) = error as? RecordStoreError else { return false }
            return reason.hasPrefix("line at byte \(lineStart):")
        }
    }

    /// Snapshot lines as other writers (or hands) may leave them: fields out of order, a field
    /// twice, escaped keys, members in another order.
    static let lines = [
        #"{"recordName":"a","recordType":"T","recordChangeTag":"1","identity":20,"seq":1,"fields":{"z":{"type":"int64","value":1},"b":{"type":"string","value":"x"}},"sizes":{"text":5}}"#,
        #"{"recordName":"a","recordType":"T","fields":{"k":{"type":"int64","value":1},"k":{"type":"int64","value":2},"a":{"type":"bool","value":true}}}"#,
        #"{"fields":{"r":{"type":"reference","value":{"action":"none","recordName":"t"}}},"recordT\u0079pe":"T","record\u004eame":"\u0061"}"#,
        #"{"recordName":"a","recordType":"T","fields":{"l":{"value":[],"type":"list"}},"modificationDate":12.5,"creationDate":1}"#,
    ]

    @Test(arguments: lines) func snapshotLinesDecodeAsTheRecordDecoderDecodesThem(_ line: String) throws {
        let fast = try RecordCoding.decodeMetadata(Data(line.utf8))
        let decoded = try RecordCoding.decodeWithExtras(Data(line.utf8))
        let careful = RecordMetadata(record: decoded.record, sizes: decoded.sizes, seq: decoded.seq)
        #expect(fast == careful)
        #expect(fast.record == careful.record)
        #expect(fast.recordID.recordName == "a")
        #expect(fast.recordType == "T")
    }
}

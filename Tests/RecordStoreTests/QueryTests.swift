import Foundation
import TestSupport
import Testing

@testable import RecordStore

@Suite struct QueryTests {
    @Test func referenceQuerySortLimitAndCursor() throws {
        let db = try makeDatabase()
        var records = [folder("f"), folder("g")]
        for i in 0..<25 {
            var n = note("n\(i)", folder: i % 5 == 0 ? "g" : "f", text: String(repeating: i % 2 == 0 ? "even " : "odd ", count: 80))
            n["rank"] = .int64(Int64((i * 7) % 25))
            records.append(n)
        }
        try db.modify(saving: records)
        let inF = try RecordStore.Predicate(
            format: "folder == %@", .reference(Reference(recordID: RecordID(recordName: "f"), action: .deleteSelf)))
        #expect(inF.referenceConstraint?.recordName == "f")
        let query = Query(recordType: "Note", predicate: inF, sortDescriptors: [SortDescriptor(key: "rank", ascending: false)])
        var page = try db.query(query, resultsLimit: 7)
        var names: [String] = page.records.map(\.recordID.recordName)
        while let cursor = page.cursor {
            page = try db.query(continuing: cursor, resultsLimit: 7)
            names += page.records.map(\.recordID.recordName)
        }
        let expected = (0..<25).filter { $0 % 5 != 0 }.sorted { ($0 * 7) % 25 > ($1 * 7) % 25 }.map { "n\($0)" }
        #expect(names == expected)
        // Full records come back (text is a large field, read from the record file).
        let first = try #require(try db.query(query, resultsLimit: 1).records.first)
        #expect(first["text"]?.stringValue?.count == 400 || first["text"]?.stringValue?.count == 320)
        // A predicate on the large field, combined with the reference index.
        let evenInF = try RecordStore.Predicate(
            format: "folder == %@ AND text BEGINSWITH[c] 'EVEN'", .reference(Reference(recordID: RecordID(recordName: "f"), action: .none)))
        let evens = try db.query(Query(recordType: "Note", predicate: evenInF, sortDescriptors: [SortDescriptor(key: "recordName")]))
        #expect(evens.records.map(\.recordID.recordName) == (0..<25).filter { $0 % 5 != 0 && $0 % 2 == 0 }.map { "n\($0)" }.sorted())
        // Fetch by IDs, each with its own result.
        let fetched = db.records(for: [RecordID(recordName: "n1"), RecordID(recordName: "missing")])
        #expect(try fetched[RecordID(recordName: "n1")]?.get()["rank"] == .int64(7))
        #expect(throws: RecordStoreError.unknownItem(RecordID(recordName: "missing"))) {
            try fetched[RecordID(recordName: "missing")]!.get()
        }
    }
}

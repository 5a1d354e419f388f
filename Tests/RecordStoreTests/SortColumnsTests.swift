import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// A query sorts a column of dates or numbers as plain doubles (``SortColumns``): the order must be
/// the one ``SortColumns/order(_:_:)`` gives two values, missing values and mixed kinds included.
@Suite struct SortColumnsTests {
    static let columns: [String: [FieldValue?]] = [
        "dates": [
            .date(Date(timeIntervalSince1970: 5)), nil, .date(Date(timeIntervalSince1970: -3)), .date(Date(timeIntervalSince1970: 5)),
        ],
        "integers": [.int64(3), .int64(-7), nil, .int64(Int64.max), .int64(3), .int64(0)],
        "numbers": [.double(2.5), .int64(2), nil, .double(-0.0), .int64(0), .double(1e300)],
        "dates and numbers": [.date(Date(timeIntervalSince1970: 1)), .int64(1), .double(0.5), nil],
        "strings": [.string("b"), .string("a"), nil, .string("b")],
    ]

    @Test(arguments: columns.keys.sorted(), [true, false])
    func aQuerySortsAsTheValuesOrder(_ column: String, ascending: Bool) throws {
        let db = try makeDatabase()
        var records = [folder("f")]
        for (i, value) in Self.columns[column]!.enumerated() {
            var record = note("n\(i)", folder: "f")
            record["rank"] = value
            record["tie"] = .int64(Int64(i % 2))
            records.append(record)
        }
        _ = try db.modify(saving: records)
        let descriptors = [SortDescriptor(key: "rank", ascending: ascending), SortDescriptor(key: "tie")]
        let sorted = try db.query(Query(recordType: "Note", sortDescriptors: descriptors)).records.map(\.recordID.recordName)
        // The same records sorted by the general comparison, one pair at a time.
        let expected = records.dropFirst().sorted { a, b in
            for descriptor in descriptors {
                if let order = SortColumns.order(a[descriptor.key], b[descriptor.key]), order != .orderedSame {
                    return (order == .orderedAscending) == descriptor.ascending
                }
            }
            return a.recordID < b.recordID
        }.map(\.recordID.recordName)
        #expect(sorted == expected)
        #expect(Set(sorted).count == records.count - 1)
    }
}

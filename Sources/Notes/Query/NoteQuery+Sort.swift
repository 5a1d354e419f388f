import Foundation
import RecordStore

/// The order of a query of properties.
extension NoteQuery {
    /// `records` in the order of `descriptors` (record fields and properties alike), ties broken by
    /// record name. A note without the value sorts after those with it, ascending or descending;
    /// values of different kinds sort by kind in either direction (numbers, dates, text, bools,
    /// lists), so that `-priority` lists the numbers from the highest down, then text.
    static func sorted(_ records: [Record], by descriptors: [RecordStore.SortDescriptor]) -> [Record] {
        let keyed = records.map { record in
            let values = NoteValues(record)
            return (values: descriptors.map { values[$0.key] }, name: record.recordID.recordName, record: record)
        }
        return keyed.sorted { a, b in
            for (k, descriptor) in descriptors.enumerated() {
                switch (a.values[k], b.values[k]) {
                case (nil, nil): continue
                case (nil, _): return false
                case (_, nil): return true
                case (let x?, let y?):
                    let (kx, ky) = (kindRank(x), kindRank(y))
                    if kx != ky { return kx < ky }
                    let order = Self.order(x, y)
                    if order != 0 { return (order < 0) == descriptor.ascending }
                }
            }
            return a.name < b.name
        }.map(\.record)
    }

    /// -1, 0 or 1: two values of one kind by value (list items too), of different kinds by ``kindRank(_:)``.
    static func order(_ a: FieldValue, _ b: FieldValue) -> Int {
        switch (a, b) {
        case (.string(let x), .string(let y)): return x < y ? -1 : x == y ? 0 : 1
        case (.date(let x), .date(let y)): return x < y ? -1 : x == y ? 0 : 1
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (!x ? -1 : 1)
        case (.list(let x), .list(let y)):
            for (u, v) in zip(x, y) {
                let order = order(u, v)
                if order != 0 { return order }
            }
            return x.count < y.count ? -1 : x.count == y.count ? 0 : 1
        default:
            if let x = number(a), let y = number(b) { return x < y ? -1 : x == y ? 0 : 1 }
            let (ra, rb) = (kindRank(a), kindRank(b))
            return ra < rb ? -1 : ra == rb ? 0 : 1
        }
    }

    /// Numbers first, then dates, text, bools, lists, and the rest.
    static func kindRank(_ value: FieldValue) -> Int {
        switch value {
        case .int64, .double: 0
        case .date: 1
        case .string: 2
        case .bool: 3
        case .list: 4
        default: 5
        }
    }

    static func number(_ value: FieldValue) -> Double? {
        switch value {
        case .int64(let i): Double(i)
        case .double(let d): d.isNaN ? nil : d
        default: nil
        }
    }
}

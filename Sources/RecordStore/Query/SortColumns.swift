import Foundation

/// The values a query's matches are sorted on, one column per sort descriptor, laid out so that a
/// comparison reads them in place (a sort moves integers and never copies a record).
///
/// A column whose values are all dates, or all numbers (`int64` or `double`), none of them NaN,
/// is held as plain doubles: ordering them is ordering the values, and a comparison is then two
/// loads, not a switch over two ``FieldValue``s (a folder of notes is sorted by its
/// `modificationDate`). Any other column keeps its values and is compared by ``order(_:_:)``.
struct SortColumns {
    enum Column {
        /// nil for a record without the value.
        case numbers([Double?])
        case values([FieldValue?])
    }

    private let columns: [Column]
    private let ascending: [Bool]
    /// The last tie-breaker: the record names.
    private let names: [String]

    /// The columns of `matches`, whose positions are in `candidates`.
    init(_ matches: [QueryMatch], of candidates: [RecordMetadata], descriptors: [SortDescriptor]) {
        columns = descriptors.indices.map { k in Self.column(matches.map { $0.sortValues[k] }) }
        ascending = descriptors.map(\.ascending)
        names = matches.map { candidates[$0.position].recordID.recordName }
    }

    /// The matches' positions in sort order (ties broken by record name).
    func sortedPositions(_ matches: [QueryMatch]) -> [Int] {
        let order = matches.indices.sorted { i, j in
            for k in columns.indices {
                let result: ComparisonResult?
                switch columns[k] {
                case .numbers(let values): result = Self.order(values[i], values[j])
                case .values(let values): result = Self.order(values[i], values[j])
                }
                if let result, result != .orderedSame { return (result == .orderedAscending) == ascending[k] }
            }
            return names[i] < names[j]
        }
        return order.map { matches[$0].position }
    }

    private static func column(_ values: [FieldValue?]) -> Column {
        var numbers: [Double?] = []
        numbers.reserveCapacity(values.count)
        var dates = false
        var others = false
        for value in values {
            switch value {
            case nil: numbers.append(nil)
            case .date(let date)?:
                dates = true
                numbers.append(date.timeIntervalSinceReferenceDate)
            case .int64(let i)?:
                others = true
                numbers.append(Double(i))
            case .double(let d)?:
                others = true
                numbers.append(d)
            default:
                return .values(values)
            }
            // A NaN is neither below, equal to nor above anything: the general order handles it.
            if let last = numbers.last, let last, last.isNaN { return .values(values) }
            // A date and a number do not compare (``order(_:_:)`` answers nil for them).
            if dates && others { return .values(values) }
        }
        return .numbers(numbers)
    }

    /// Orders two numbers; missing values sort first (as ``order(_:_:)`` orders dates and numbers).
    static func order(_ a: Double?, _ b: Double?) -> ComparisonResult {
        switch (a, b) {
        case (nil, nil): .orderedSame
        case (nil, _): .orderedAscending
        case (_, nil): .orderedDescending
        case (let x?, let y?): x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
        }
    }

    /// Orders two values of the same kind; missing values sort first; nil for values that do not
    /// compare (a string and a number).
    static func order(_ a: FieldValue?, _ b: FieldValue?) -> ComparisonResult? {
        switch (a, b) {
        case (nil, nil): return .orderedSame
        case (nil, _): return .orderedAscending
        case (_, nil): return .orderedDescending
        case (.string(let x)?, .string(let y)?): return x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
        case (.date(let x)?, .date(let y)?): return x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
        case (.bool(let x)?, .bool(let y)?): return x == y ? .orderedSame : (!x ? .orderedAscending : .orderedDescending)
        default:
            guard let x = a?.numeric, let y = b?.numeric else { return nil }
            return x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
        }
    }
}

extension FieldValue {
    fileprivate var numeric: Double? {
        switch self {
        case .int64(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }
}

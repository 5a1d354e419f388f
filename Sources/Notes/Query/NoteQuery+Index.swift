import Foundation
import Index
import RecordStore

/// The fast path of a query of properties: the index's `props` table names the notes that can
/// match, so that only those are read and tested.
extension NoteQuery {
    /// How many terms of one predicate the index narrows by (each reads every row of its key):
    /// the other terms are tested on the notes read, so that a predicate of 10,000 terms costs
    /// no more index reads than this.
    static let maximumIndexedTerms = 8

    /// The record names of the notes that can match `predicate`, a superset of those that do;
    /// nil when no term of its top-level `AND` can be answered by the index.
    ///
    /// A term is answered when it reads one property and matches no note that lacks it: then a
    /// note matching it has the property, the index holds the property's value exactly (a list
    /// item by item, in order), and the term is evaluated on that value. A term that a note
    /// without the property, or with an empty list, would match (`NOT status == "x"`,
    /// `status == NIL`, `tags != {"a"}`) is left to the full test (the index has no row for
    /// either).
    /// - Throws: ``SQLiteError`` when the index cannot be read.
    static func indexedCandidates(_ predicate: RecordStore.Predicate, in index: TextIndex) throws(SQLiteError) -> Set<String>? {
        var result: Set<String>?
        var indexed = 0
        var rowsByKey: [String: [String: [IndexedProperty]]] = [:]
        for term in predicate.conjunctionTerms where indexed < maximumIndexedTerms {
            let keys = term.keys
            guard keys.count == 1, let key = keys.first, isPropertyKey(key), !matchesWithoutValue(term) else { continue }
            indexed += 1
            let lowered = key.lowercased()
            let rows: [String: [IndexedProperty]]
            if let known = rowsByKey[lowered] {
                rows = known
            } else {
                rows = try index.properties(ofDocumentsWithKey: lowered)
                rowsByKey[lowered] = rows
            }
            var names = Set<String>()
            for (name, properties) in rows {
                let value = indexedValue(properties)
                if term.evaluate({ _ in value }, strictKeys: isPropertyKey) { names.insert(name) }
            }
            result = result.map { $0.intersection(names) } ?? names
            if result?.isEmpty == true { break }
        }
        return result
    }

    /// Whether a term of one key matches a note that lacks the key or holds an empty list there.
    static func matchesWithoutValue(_ term: RecordStore.Predicate) -> Bool {
        term.evaluate({ _ in nil }, strictKeys: isPropertyKey) || term.evaluate({ _ in .list([]) }, strictKeys: isPropertyKey)
    }

    /// The value the index's rows of one property of one note describe (``NoteIndexing``'s rows, read back).
    static func indexedValue(_ rows: [IndexedProperty]) -> FieldValue? {
        guard let last = rows.last else { return nil }
        switch last.kind {
        case .list: return .list(rows.map { .string($0.text ?? "") })
        case .text: return .string(last.text ?? "")
        case .number: return last.number.map(FieldValue.double)
        case .bool: return .bool(last.text == "true")
        case .date: return last.number.map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        }
    }
}

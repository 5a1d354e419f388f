import Foundation
import Index
import RecordStore

/// A query over notes whose predicate and sort may name front-matter properties: the rules of
/// `notesfs query` and of the mount's `.query/PREDICATE`, in one place.
///
/// Keys: a key that names a note record's own field or a system field (``recordKeys``, compared
/// exactly, as the store compares keys) is that field, even when a property has the same name; any
/// other key is the note's front-matter property of that name, compared without case
/// (`Status == "active"` reads `status:`).
///
/// Values: a property is text (a string), a number, a bool, a date or a list of strings (see
/// ``FrontMatter``). It compares with values of its own kind only: a date with `NOW` or
/// `CAST("2026-12-01", "NSDate")`, a number with numbers, text with strings; a list with
/// `"x" IN tags` or `tags CONTAINS "x"` (an item equal to `"x"`). A property that a note lacks, or
/// whose value is of another kind, matches no comparison, `!=` included (SQL's rule); `NOT`
/// negates, and `key == NIL` matches the notes without the property.
///
/// Answers equal a full scan (every note's front matter parsed and the predicate evaluated): the
/// index's `props` table only narrows the notes the scan reads (``indexedCandidates(_:in:)``).
public enum NoteQuery {
    /// The keys that name a note record's own field or a system field, never a property.
    public static let recordKeys: Set<String> = [
        FieldName.title, FieldName.text, FieldName.content, FieldName.folder, FieldName.mode, FieldName.uid, FieldName.gid,
        ExtendedAttributes.fieldKey, "recordName", "recordID", "recordType", "creationDate", "modificationDate", "recordChangeTag",
    ]

    /// Whether `key` names a front-matter property (not a field of the note's record).
    public static func isPropertyKey(_ key: String) -> Bool { !recordKeys.contains(key) }

    /// Whether a query reads properties: it is of notes, and its predicate or sort names one.
    public static func readsProperties(_ query: Query) -> Bool {
        query.recordType == Note.recordType
            && (query.predicate.keys.contains(where: isPropertyKey) || query.sortDescriptors.contains { isPropertyKey($0.key) })
    }

    /// The records `query` matches, sorted by its descriptors (ties by record name; a note without
    /// a property sorts after those with it, in either direction), at most `limit` of them.
    ///
    /// A query that reads no property is the store's own (``RecordDatabase/query(_:resultsLimit:)``,
    /// with whatever candidate source the database has). `index`, when given, narrows a query of
    /// properties; without it every note is read.
    ///
    /// - Throws: ``NotesError/store(_:)`` when the store cannot answer.
    public static func records(
        _ query: Query, limit: Int? = nil, in database: RecordDatabase, index: NotesSearchIndex? = nil
    ) throws(NotesError) -> [Record] {
        guard readsProperties(query) else { return try storeRecords(query, limit: limit, in: database) }
        let names = index.flatMap { index in
            try? index.readCurrent { (index) throws(SQLiteError) in try indexedCandidates(query.predicate, in: index) }
        }
        var candidates: [Record]
        if let names = names ?? nil {
            let ids = names.sorted().map { RecordID(recordName: $0) }
            let fetched = database.records(for: ids)
            candidates = ids.compactMap { id in
                guard case .success(let record)? = fetched[id], record.recordType == Note.recordType else { return nil }
                return record
            }
        } else {
            // The terms on record fields go to the store (its indexes and candidate source); the rest is evaluated here.
            let fieldTerms = query.predicate.conjunctionTerms.filter { !$0.keys.contains(where: isPropertyKey) }
            candidates = try storeRecords(
                Query(recordType: Note.recordType, predicate: RecordStore.Predicate(and: fieldTerms)), limit: nil, in: database)
        }
        candidates.removeAll { !matches(query.predicate, $0) }
        var result = sorted(candidates, by: query.sortDescriptors)
        if let limit, result.count > limit { result.removeLast(result.count - max(0, limit)) }
        return result
    }

    /// Whether the note `record` matches `predicate`, its properties read from its text: the
    /// full scan's test, which every answer passes.
    public static func matches(_ predicate: RecordStore.Predicate, _ record: Record) -> Bool {
        let values = NoteValues(record)
        return predicate.evaluate({ values[$0] }, strictKeys: isPropertyKey)
    }

    /// A property's value as a predicate compares it.
    public static func fieldValue(_ value: PropertyValue) -> FieldValue {
        switch value {
        case .text(let text): .string(text)
        case .number(let number): .double(number)
        case .bool(let bool): .bool(bool)
        case .date(let date): .date(date)
        case .list(let items): .list(items.map(FieldValue.string))
        }
    }

    /// Every record of the store's own query, all pages.
    static func storeRecords(_ query: Query, limit: Int?, in database: RecordDatabase) throws(NotesError) -> [Record] {
        var records: [Record] = []
        do {
            var page = try database.query(query, resultsLimit: limit)
            records = page.records
            while limit == nil, let cursor = page.cursor {
                page = try database.query(continuing: cursor)
                records += page.records
            }
        } catch {
            throw .store(error)
        }
        if let limit, records.count > limit { records.removeLast(records.count - limit) }
        return records
    }
}

/// A note's values as a query reads them: its record's fields and system fields, then its
/// front-matter properties by lowercased key.
struct NoteValues {
    let record: Record
    let properties: [String: FieldValue]

    init(_ record: Record) {
        self.record = record
        var properties: [String: FieldValue] = [:]
        if case .string(let text)? = record[FieldName.text] {
            for property in FrontMatter.parse(text)?.properties ?? [] {
                properties[property.key.lowercased()] = NoteQuery.fieldValue(property.value)
            }
        }
        self.properties = properties
    }

    subscript(key: String) -> FieldValue? {
        guard NoteQuery.recordKeys.contains(key) else { return properties[key.lowercased()] }
        switch key {
        case "recordName": return .string(record.recordID.recordName)
        case "recordID": return .reference(Reference(recordID: record.recordID, action: .none))
        case "recordType": return .string(record.recordType)
        case "creationDate": return record.creationDate.map(FieldValue.date)
        case "modificationDate": return record.modificationDate.map(FieldValue.date)
        case "recordChangeTag": return record.recordChangeTag.map(FieldValue.string)
        default: return record[key]
        }
    }
}

extension NoteQuery {
    /// The notes matching the predicate `format` (as typed: the mount's `.query/PREDICATE`), by
    /// record name.
    /// - Throws: ``NotesError/refusedQuery(_:)`` for a predicate that does not parse (the syntax
    ///   error); ``NotesError/store(_:)`` when the store cannot answer.
    public static func recordIDs(matching format: String, in database: RecordDatabase, index: NotesSearchIndex?) throws(NotesError)
        -> [RecordID]
    {
        let predicate: RecordStore.Predicate
        do { predicate = try RecordStore.Predicate(format: format) } catch { throw .refusedQuery(error.description) }
        let query = Query(
            recordType: Note.recordType, predicate: predicate, sortDescriptors: [RecordStore.SortDescriptor(key: "recordName")])
        return try records(query, in: database, index: index).map(\.recordID)
    }
}

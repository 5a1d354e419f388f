import Foundation
import Index
import RecordStore
import TestSupport
import Testing

@testable import Notes

/// Queries of front-matter properties (``NoteQuery``): their rules, and the index's fast path
/// against a full scan.
@Suite struct NoteQueryTests {
    /// A database holding notes with these texts (titles `n0`, `n1`, …), saved in one commit.
    static func database(_ texts: [String]) throws -> RecordDatabase {
        let manager = try makeManager()
        let records = texts.enumerated().map {
            Note(title: "n\($0.offset)", text: $0.element, recordID: RecordID(recordName: "n\($0.offset)")).record
        }
        try manager.database.modify(saving: records)
        return manager.database
    }

    static func titles(_ format: String, sort: [RecordStore.SortDescriptor] = [], in database: RecordDatabase, indexed: Bool = true) throws
        -> [String]
    {
        let query = Query(recordType: Note.recordType, predicate: try RecordStore.Predicate(format: format), sortDescriptors: sort)
        let records = try NoteQuery.records(query, in: database, index: indexed ? NotesSearchIndex(database: database) : nil)
        return records.map { (try? Note(record: $0).title) ?? "?" }
    }

    static let corpus = [
        "---\nstatus: active\npriority: 3\ndue: 2020-01-01\ntags: [x, y]\n---\nbody",
        "---\nStatus: Active\npriority: 1\ndue: 2999-01-01\ntags: [y]\n---\n",
        "---\nstatus: done\npriority: \"2\"\ntitle: Other\n---\n",
        "no front matter",
        "---\nstatus: active\ndue: soon\ndone: true\n---\n",
    ]

    @Test func comparisonsOfProperties() throws {
        let db = try Self.database(Self.corpus)
        #expect(try Self.titles(#"status == "active""#, in: db) == ["n0", "n4"])
        #expect(try Self.titles(#"STATUS ==[c] "active""#, in: db) == ["n0", "n1", "n4"])
        #expect(try Self.titles(#"status == "active" AND due < now"#, in: db) == ["n0"])
        #expect(try Self.titles(#"due > CAST("2026-12-01", "NSDate")"#, in: db) == ["n1"])
        // A number compares with numbers only: the quoted "2" is text.
        #expect(try Self.titles("priority >= 2", in: db) == ["n0"])
        #expect(try Self.titles(#"priority == "2""#, in: db) == ["n2"])
        #expect(try Self.titles(#""x" IN tags"#, in: db) == ["n0"])
        #expect(try Self.titles(#"tags CONTAINS "y""#, in: db) == ["n0", "n1"])
        #expect(try Self.titles("done == TRUE", in: db) == ["n4"])
        // Missing or of another kind: no comparison matches, `!=` included; NOT negates; NIL tests presence.
        #expect(try Self.titles(#"status != "active""#, in: db) == ["n1", "n2"])
        #expect(try Self.titles(#"NOT status == "active""#, in: db) == ["n1", "n2", "n3"])
        #expect(try Self.titles("status == NIL", in: db) == ["n3"])
        #expect(try Self.titles("due != NOW", in: db) == ["n0", "n1"])
        // The record's field wins over a property of the same name.
        #expect(try Self.titles(#"title == "Other""#, in: db) == [])
        #expect(try Self.titles(#"title == "n2""#, in: db) == ["n2"])
    }

    @Test func sortByPropertyPutsNotesWithoutItLast() throws {
        let db = try Self.database(Self.corpus)
        let ascending = try Self.titles("TRUEPREDICATE", sort: [RecordStore.SortDescriptor(key: "due")], in: db)
        #expect(ascending == ["n0", "n1", "n4", "n2", "n3"])  // two dates, then text, then none (by name)
        let descending = try Self.titles("TRUEPREDICATE", sort: [RecordStore.SortDescriptor(key: "priority", ascending: false)], in: db)
        #expect(descending == ["n0", "n1", "n2", "n3", "n4"])  // 3, 1, then the text "2", then none
    }

    @Test func nowIsTheParseDateAndCastTakesISODates() throws {
        let before = Date()
        let predicate = try RecordStore.Predicate(format: "due < NOW()")
        #expect(predicate.description.hasPrefix("due < CAST("))
        let cast = try RecordStore.Predicate(format: #"d == CAST("2026-12-01", "NSDate")"#)
        #expect(cast.evaluate(["d": .date(Date(timeIntervalSince1970: 1_796_083_200))]))
        let timed = try RecordStore.Predicate(format: #"d == CAST("2026-12-01T09:30:00+01:00", "NSDate")"#)
        #expect(timed.evaluate(["d": .date(Date(timeIntervalSince1970: 1_796_083_200 + 8.5 * 3600))]))
        #expect(throws: RecordStoreError.self) { try RecordStore.Predicate(format: #"d == CAST("December", "NSDate")"#) }
        #expect(try RecordStore.Predicate(format: "d < now").evaluate(["d": .date(before.addingTimeInterval(-1))]))
        // A key spelled `now` is written `#now`.
        #expect(try RecordStore.Predicate(format: "#now == 1").evaluate(["now": .int64(1)]))
    }

    /// The index's answers equal a full scan's on a random corpus and many random predicates.
    @Test func fastPathEqualsFullScan() throws {
        var random = SeededGenerator(state: 20_261_204)
        let statuses = ["active", "done", "Active", "", "\"2\""]
        var texts: [String] = []
        for _ in 0..<300 {
            var lines: [String] = []
            if Bool.random(using: &random) { lines.append("status: " + statuses.randomElement(using: &random)!) }
            if Bool.random(using: &random) { lines.append("priority: \(Int.random(in: -1...4, using: &random))") }
            if Bool.random(using: &random) {
                lines.append("due: 2026-0\(Int.random(in: 1...9, using: &random))-1\(Int.random(in: 0...9, using: &random))")
            }
            if Int.random(in: 0..<4, using: &random) == 0 { lines.append("due: someday") }
            if Bool.random(using: &random) {
                let tags = ["x", "y", "z", "X"].filter { _ in Bool.random(using: &random) }
                lines.append("tags: [" + tags.joined(separator: ", ") + "]")
            }
            if Int.random(in: 0..<5, using: &random) == 0 { lines.append("done: \(Bool.random(using: &random))") }
            if Int.random(in: 0..<8, using: &random) == 0 { lines.append("title: prop") }
            if Int.random(in: 0..<10, using: &random) == 0 { lines.append("broken: [a") }
            texts.append(lines.isEmpty && Bool.random(using: &random) ? "plain" : "---\n" + lines.joined(separator: "\n") + "\n---\nbody")
        }
        let db = try Self.database(texts)
        let comparisons = [
            #"status == "active""#, #"status ==[c] "active""#, #"status != "done""#, #"status BEGINSWITH "a""#, "status == NIL",
            "status != NIL", #"status CONTAINS "ct""#, "priority >= 2", "priority < 1", "priority != 3", #"priority == "2""#,
            "priority IN {1, 2}", "due < now", #"due > CAST("2026-05-01", "NSDate")"#, #"due == "someday""#, "due <= NOW",
            #""x" IN tags"#, #"tags CONTAINS "y""#, #"tags CONTAINS[c] "x""#, #"tags == {"x", "y"}"#, "tags != {}", "tags == {}",
            "done == TRUE", "done != FALSE", #"title == "prop""#, #"TITLE == "prop""#, #"title BEGINSWITH "n1""#, "missing == 1",
            "missing != 1", #"broken == "a""#,
        ]
        var predicates: [String] = []
        for _ in 0..<200 {
            let count = Int.random(in: 1...3, using: &random)
            let terms = (0..<count).map { _ in
                let term = comparisons.randomElement(using: &random)!
                switch Int.random(in: 0..<6, using: &random) {
                case 0: return "NOT " + term
                case 1: return "(\(term) OR \(comparisons.randomElement(using: &random)!))"
                default: return term
                }
            }
            predicates.append(terms.joined(separator: " AND "))
        }
        let everyNote = try db.query(Query(recordType: Note.recordType)).records
        #expect(everyNote.count == 300)
        var nonEmpty = 0
        var narrowed = 0
        let index = NotesSearchIndex(database: db)
        for format in predicates + comparisons {
            let predicate = try RecordStore.Predicate(format: format)
            let scanned = Set(everyNote.filter { NoteQuery.matches(predicate, $0) }.map(\.recordID.recordName))
            let fast = Set(try Self.titles(format, in: db))
            let unindexed = Set(try Self.titles(format, in: db, indexed: false))
            #expect(fast == scanned, "\(format)")
            #expect(unindexed == scanned, "\(format)")
            if !scanned.isEmpty { nonEmpty += 1 }
            let candidates = try index.readCurrent { (index) throws(SQLiteError) in try NoteQuery.indexedCandidates(predicate, in: index) }
            if let candidates, candidates.count < everyNote.count {
                narrowed += 1
                #expect(scanned.isSubset(of: candidates), "\(format)")
            }
        }
        #expect(nonEmpty > 100)
        #expect(narrowed > 100)  // the fast path answered most
    }

    /// Hostile predicates: nested too deep is refused; 10,000 terms are answered with at most
    /// ``NoteQuery`` 's few index reads; a 64 KiB property value is read and compared.
    @Test func hostileInput() throws {
        let big = String(repeating: "v", count: 65_536)
        let db = try Self.database(["---\nstatus: \(big)\n---\n", "---\nstatus: active\n---\n"])
        #expect(throws: RecordStoreError.self) {
            try RecordStore.Predicate(format: String(repeating: "(", count: 200) + "a == 1" + String(repeating: ")", count: 200))
        }
        let long = (0..<10_000).map { "status != \"s\($0)\"" }.joined(separator: " AND ")
        let started = Date()
        #expect(try Self.titles(long, in: db) == ["n0", "n1"])
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(try Self.titles("status == \"\(big)\"", in: db) == ["n0"])
        #expect(try Self.titles(#"status ENDSWITH "vv""#, in: db) == ["n0"])
    }
}

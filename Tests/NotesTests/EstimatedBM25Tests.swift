import Foundation
import SQLite
import TestSupport
import Testing

@testable import Index

/// The search's rank function (``EstimatedBM25``) is FTS5's `bm25` with the index's column
/// weights, its phrase counts bounded: the same score while a phrase's rows are counted in full
/// or spread evenly, and a bounded count past ``EstimatedBM25/countedRows``.
@Suite struct EstimatedBM25Tests {
    /// 3,000 notes (more than `countedRows`): "common" in each, "tenth" in every tenth, "n`i`"
    /// in note `i`, "titled" in the title of every 100th, random other words.
    static func corpus() throws -> TextIndex {
        let index = try TextIndex.temporary()
        var random = SeededGenerator(state: 11)
        let pieces = ["alpha", "beta", "gamma", "delta"]
        try index.update { (w) throws(SQLiteError) in
            for i in 0..<3_000 {
                var words = ["common", "n\(i)"]
                if i % 10 == 0 { words.append("tenth") }
                for _ in 0..<(5 + Int(random.next() % 40)) { words.append(pieces[Int(random.next() % UInt64(pieces.count))]) }
                let title = i % 100 == 0 ? "Titled \(i)" : "Note \(i)"
                try w.save(
                    IndexedDocument(
                        name: "note-\(i)", recordType: "Note", folder: nil, fileName: "\(title).md", title: title,
                        body: words.joined(separator: " "), modificationDate: Date(timeIntervalSinceReferenceDate: Double(i))))
            }
        }
        return index
    }

    /// Each matching row's score by both functions, by row.
    static func scores(_ index: TextIndex, _ query: String, counted: Int = EstimatedBM25.countedRows) throws -> [(
        Int64, bm25: Double, estimated: Double
    )] {
        let rank = TextIndex.rank.replacingOccurrences(of: ", \(EstimatedBM25.countedRows),", with: ", \(counted),")
        return try index.connection.prepare("SELECT rowid, words.rank, \(rank) FROM words WHERE words MATCH ?1 ORDER BY rowid")
            .rows([.text(query)]) { ($0.int(0), $0.double(1), $0.double(2)) }
    }

    @Test(arguments: [
        "n42", "tenth", "common", "n42 common", "tenth alpha", "titled", "\"common n7\"", "n1*", "tenth OR n5", "alpha NOT tenth",
    ])
    func theScoreIsBM25s(query: String) throws {
        let index = try Self.corpus()
        defer { index.close() }
        let scores = try Self.scores(index, query)
        #expect(!scores.isEmpty)
        for (row, bm25, estimated) in scores {
            #expect(abs(estimated - bm25) <= 1e-9 * abs(bm25), "row \(row): \(estimated) against \(bm25)")
        }
    }

    /// Counted to 10 rows only, a phrase in every tenth note is estimated from its 10th row (rowid
    /// 91 of 3,000: 330 rows, where 300 hold it): each row's score is `bm25`'s times one factor,
    /// the IDFs' ratio, so the order is `bm25`'s; a phrase in one early row is estimated at most
    /// at the rows' count, and its score moves.
    @Test func aPhrasePastTheBoundIsEstimatedFromWhereItsRowsLie() throws {
        let index = try Self.corpus()
        defer { index.close() }
        let factor = EstimatedBM25.idf(hits: 10.0 * 3000 / 91, rows: 3000) / EstimatedBM25.idf(hits: 300, rows: 3000)
        let tenth = try Self.scores(index, "tenth", counted: 10)
        #expect(tenth.count == 300)
        for (row, bm25, estimated) in tenth {
            #expect(abs(estimated - bm25 * factor) <= 1e-9 * abs(bm25), "row \(row)")
        }
        let rare = try Self.scores(index, "n42", counted: 1)
        #expect(rare.count == 1 && rare[0].estimated != rare[0].bm25 && rare[0].estimated < 0)
    }

    @Test func theEstimateStaysBetweenTheBoundAndTheRows() {
        typealias Count = EstimatedBM25.PhraseCount
        // Every other row of 200: the 10th at rowid 20.
        #expect(EstimatedBM25.estimatedRows(Count(rows: 10, limit: 10, lastRowid: 20), maxRowid: 200, rowCount: 200) == 100)
        // Fewer rows than the bound: counted, not estimated.
        #expect(EstimatedBM25.estimatedRows(Count(rows: 7, limit: 10, lastRowid: 0), maxRowid: 200, rowCount: 200) == 7)
        // The 10th at rowid 1 (impossible for distinct rows, as from a damaged index): at most every row.
        #expect(EstimatedBM25.estimatedRows(Count(rows: 10, limit: 10, lastRowid: 1), maxRowid: 200, rowCount: 150) == 150)
        // A rowid past the highest (a row added meanwhile): at least the bound.
        #expect(EstimatedBM25.estimatedRows(Count(rows: 10, limit: 10, lastRowid: 500), maxRowid: 200, rowCount: 200) == 10)
        #expect(EstimatedBM25.idf(hits: 150, rows: 200) == 1e-6)
        #expect(abs(EstimatedBM25.idf(hits: 9.5, rows: 200) - log(191.0 / 10.0)) < 1e-12)
    }
}

import CSQLite
import Foundation
import SQLite

/// Which rows a search shows first, and in what order: BM25 for every match of a query with at
/// most ``TextIndex/rankedRows`` matches; for a more common query, BM25 for a bounded set of its
/// matches only, so a word in every note answers about as fast as a rare one.
///
/// FTS5 computes BM25 row by row (each row's column sizes are a B-tree lookup), and a top 20
/// cannot be chosen before every match has its score: a word in all of 100,000 notes cost about
/// 250 ms however few hits were shown. So the matches are first counted up to one past the bound,
/// newest first (FTS5 walks the rowids of its doclists without scoring them). At most the bound:
/// every match is ranked, exactly as before. Past it, the ranked rows are the `rankedRows` newest
/// matches (highest rowid: the latest added to the index) and the `rankedRows` newest of the
/// notes whose title matches the query, from the `titles` table (BM25 weighs the title ten times
/// the body: for a word a note's text holds once or twice, those are the ones it would put first;
/// with a NOT, those that do not match the whole query drop out). They are shown
/// best first by BM25 (the scores are the ones an exhaustive ranking gives them: the statistics
/// are of the whole table); the other matches follow, newest first, with ``SearchHit/rank`` 0
/// (every BM25 score is below 0). Every hit matches the query either way; only the order of a
/// common query's hits changes.
///
/// The BM25 is ``EstimatedBM25``'s: FTS5's `bm25` walked each phrase's whole list to count its
/// rows before it scored one, so `zanzibar alpha` (101 matches) paid for `alpha`'s 100,000 rows;
/// a phrase's rows are now counted up to ``EstimatedBM25/countedRows`` and estimated past it.
extension TextIndex {
    /// The most matches of one query ranked by BM25 (twice this when its title matches are added).
    public static let rankedRows = 2_000
    /// BM25's weights of the `words` columns: the title ten times the body and the CJK bigrams.
    static let columnWeights = "10.0, 1.0, 1.0"
    /// The rank of a row: BM25 as `words.rank` (the table's `bm25`) gives it, but with each
    /// phrase's rows counted up to ``EstimatedBM25/countedRows`` (``EstimatedBM25``).
    static let rank =
        "\(EstimatedBM25.name)(words, (SELECT max(id) FROM docs), \(EstimatedBM25.countedRows), \(columnWeights))"

    /// A document's folder is the folder at path ?3 or under it.
    private static let underFolder = "(f.path = ?3 OR substr(f.path, 1, length(?3) + 1) = ?3 || '/')"

    /// The rows of the hits of `query` (row id, hit without snippet), best first, at most `limit`;
    /// `few`: the query has at most ``rankedRows`` matches (each was ranked).
    func rankedHits(_ query: SearchQuery, folder: String?, limit: Int) throws(SQLiteError) -> (
        hits: [(Int64, SearchHit)], few: Bool
    ) {
        let limit = max(0, min(limit, Int(Int32.max)))
        // The statement with `rank` as its last column (joined here, not templated with
        // Foundation's `replacingOccurrences`, whose first call costs a search of the runtime's
        // protocol conformances: 3% of a search's samples).
        func select(rank: String) -> String {
            "SELECT d.id, d.name, d.type, coalesce(f.path, ''), d.file_name, d.modified, " + rank
                + " FROM words JOIN docs d ON d.id = words.rowid LEFT JOIN folders f ON f.name = d.folder WHERE words MATCH ?1"
        }
        let ranked = select(rank: Self.rank + " AS score")
        var values: [SQLiteValue] = [.text(query.expression), .integer(Int64(limit))]
        var inFolder = ""
        if let folder, !folder.isEmpty {
            inFolder = " AND " + Self.underFolder
            values.append(.text(folder))
        }
        let newest = try newestMatches(query.expression, folder: values.count > 2 ? values[2] : nil, count: Self.rankedRows + 1)
        guard newest.count > Self.rankedRows else {
            return (try connection.prepare(ranked + inFolder + " ORDER BY score, d.name LIMIT ?2").rows(values, Self.hit), true)
        }
        // The title matches, from the `titles` table (a list of titles alone: `words`' `title : …`
        // is a filter on every row of each phrase). With a NOT, a title match may not match the
        // query (the term it excludes may be in the body): the ranked query below tests each.
        let titled = try newestMatches(query.expression, in: "titles", folder: values.count > 2 ? values[2] : nil, count: Self.rankedRows)
        let boundary = newest[Self.rankedRows - 1]
        let older = titled.filter { $0 < boundary }
        if values.count == 2 { values.append(.null) }
        values += [.integer(boundary), .text("[" + older.map(String.init).joined(separator: ",") + "]")]
        // The newest matches (FTS5 walks the rows from ?4 up only: a rowid range it is given) and
        // the older title matches (`rowid IN`: FTS5 looks each up, where a range down to the oldest
        // would walk the phrases' lists from there), ranked together.
        let olderTitled = " AND words.rowid IN (SELECT value FROM json_each(?5))"
        var hits = try connection.prepare(
            ranked + inFolder + " AND words.rowid >= ?4 UNION ALL " + ranked + inFolder + olderTitled + " ORDER BY score, 2 LIMIT ?2"
        ).rows(values, Self.hit)
        guard hits.count < limit else { return (hits, false) }
        values[1] = .integer(Int64(limit - hits.count))
        hits += try connection.prepare(
            select(rank: "0.0") + inFolder + " AND words.rowid < ?4 AND +words.rowid NOT IN (SELECT value FROM json_each(?5))"
                + " ORDER BY words.rowid DESC LIMIT ?2"
        ).rows(values, Self.hit)
        return (hits, false)
    }

    /// The row ids of up to `count` matches of `expression` in `table` (`words` or `titles`;
    /// under `folder`, a path as the mount shows it), newest (highest) first; no match is scored.
    private func newestMatches(_ expression: String, in table: String = "words", folder: SQLiteValue?, count: Int) throws(SQLiteError)
        -> [Int64]
    {
        guard let folder else {
            return try connection.prepare("SELECT rowid FROM \(table) WHERE \(table) MATCH ?1 ORDER BY rowid DESC LIMIT ?2").rows(
                [.text(expression), .integer(Int64(count))]
            ) { $0.int(0) }
        }
        return try connection.prepare(
            """
            SELECT t.rowid FROM \(table) t JOIN docs d ON d.id = t.rowid LEFT JOIN folders f ON f.name = d.folder
            WHERE \(table) MATCH ?1 AND \(Self.underFolder) ORDER BY t.rowid DESC LIMIT ?2
            """
        ).rows([.text(expression), .integer(Int64(count)), folder]) { $0.int(0) }
    }

    private static func hit(_ row: Statement) -> (Int64, SearchHit) {
        let folderPath = row.text(3)
        return (
            row.int(0),
            SearchHit(
                name: row.text(1), recordType: row.text(2), path: folderPath.isEmpty ? row.text(4) : folderPath + "/" + row.text(4),
                modificationDate: row.isNull(5) ? nil : Date(timeIntervalSinceReferenceDate: row.double(5)), snippet: "",
                rank: row.double(6))
        )
    }
}

import CSQLite
import Foundation
import RecordStore
import SQLite

/// One search result.
public struct SearchHit: Sendable, Equatable {
    public var name: String
    public var recordType: String
    /// Its path as the mount shows it (folder path, `/`, file name).
    public var path: String
    public var modificationDate: Date?
    /// Body text around the matches, each match between ``SearchHit/matchStart`` and ``SearchHit/matchEnd``.
    public var snippet: String
    /// BM25 with the title weighted ten times the body and the CJK bigrams (the `words` table's `rank`): lower is better.
    /// 0 for a hit shown after the ranked ones of a query with very many matches (every BM25 score is below 0).
    public var rank: Double

    /// Marks a match's start and end in ``snippet``. A note's own U+0002 and U+0003 are removed
    /// from its snippet, so these mark matches only.
    public static let matchStart: Character = "\u{2}"
    public static let matchEnd: Character = "\u{3}"
}

extension TextIndex {
    /// The records matching `query`, best first (lowest ``SearchHit/rank``, then by record name;
    /// for a query with more than ``rankedRows`` matches, only some of them are ranked: see
    /// ``rankedHits(_:folder:limit:)``): at most `limit` (nil: every one), under `folder` (a path
    /// as the mount shows it; nil or empty: everywhere); `snippets`: with the text around the matches.
    ///
    /// - Throws: ``SQLiteError`` (damage: rebuild the index).
    public func search(_ query: SearchQuery, folder: String? = nil, limit: Int?, snippets: Bool = true) throws(SQLiteError)
        -> [SearchHit]
    {
        try read { () throws(SQLiteError) -> [SearchHit] in
            // First the rows by rank alone: SQLite evaluates a result column for every row it
            // sorts, so a snippet there would be made for every match of a common word.
            var (hits, few) = try rankedHits(query, folder: folder, limit: limit ?? Int.max)
            guard snippets else { return hits.map(\.1) }
            // Matches marked by bytes no UTF-8 text holds (0xFF, 0xFE): a note's bytes cannot fake one.
            let snippet = "snippet(words, 1, CAST(X'FF' AS TEXT), CAST(X'FE' AS TEXT), '…', 16)"
            // A query of few matches makes its snippets in one pass over them: each pass of a
            // prefix query merges its terms' lists again (`zanz*`: 600 page reads a pass, 20 passes
            // for 20 hits). A common query looks each hit up: one pass would walk all its matches.
            var made: [Int64: String] = [:]
            let rows = hits.map(\.0)
            if few, rows.count > 1, let first = rows.min(), let last = rows.max() {
                let list = "[" + rows.map(String.init).joined(separator: ",") + "]"
                let all = try connection.prepare(
                    "SELECT rowid, \(snippet) FROM words WHERE words MATCH ?1 AND rowid >= ?2 AND rowid <= ?3"
                        + " AND +rowid IN (SELECT value FROM json_each(?4))")
                let values: [SQLiteValue] = [.text(query.expression), .integer(first), .integer(last), .text(list)]
                for (row, text) in try all.rows(values, { ($0.int(0), Self.snippet($0.bytes(1))) }) { made[row] = text }
            }
            let describe = try connection.prepare("SELECT \(snippet) FROM words WHERE words MATCH ?1 AND rowid = ?2")
            let body = try connection.prepare("SELECT body FROM words WHERE rowid = ?")
            for i in hits.indices {
                if let text = made[hits[i].0] {
                    hits[i].1.snippet = text
                } else {
                    hits[i].1.snippet =
                        try describe.rows([.text(query.expression), .integer(hits[i].0)]) { Self.snippet($0.bytes(0)) }.first ?? ""
                }
                if !query.substrings.isEmpty, !hits[i].1.snippet.contains(SearchHit.matchStart),
                    let text = try body.rows([.integer(hits[i].0)], { $0.text(0) }).first,
                    let around = Self.snippet(text, around: query.substrings)
                {
                    hits[i].1.snippet = around
                }
            }
            return hits.map(\.1)
        }
    }

    /// A snippet's bytes with 0xFF and 0xFE (FTS5's marks) as ``SearchHit/matchStart`` and
    /// ``SearchHit/matchEnd``, and the text's own U+0002 and U+0003 removed.
    static func snippet(_ bytes: [UInt8]) -> String {
        var out = ""
        for (i, piece) in bytes.split(omittingEmptySubsequences: false, whereSeparator: { $0 == 0xFF || $0 == 0xFE }).enumerated() {
            if i > 0 {
                // The mark before this piece: the byte just before its start.
                out.append(bytes[piece.startIndex - 1] == 0xFF ? SearchHit.matchStart : SearchHit.matchEnd)
            }
            out.unicodeScalars.append(
                contentsOf: String(decoding: piece, as: UTF8.self).unicodeScalars.filter { $0 != "\u{2}" && $0 != "\u{3}" })
        }
        return out
    }

    /// The text around the first of `substrings` in `text` (about 16 characters before, 48 after),
    /// each of them marked; nil when none occurs in its first 64 Ki characters (the work per hit
    /// stays bounded).
    static func snippet(_ text: String, around substrings: [String]) -> String? {
        let scalars = Array(text.unicodeScalars.prefix(1 << 16).filter { $0 != "\u{2}" && $0 != "\u{3}" })
        let needles = substrings.map { Array($0.unicodeScalars) }.filter { !$0.isEmpty }
        func match(at i: Int) -> Int? {
            needles.first { i + $0.count <= scalars.count && scalars[i..<(i + $0.count)].elementsEqual($0) }?.count
        }
        guard let first = scalars.indices.first(where: { match(at: $0) != nil }) else { return nil }
        let start = max(0, first - 16)
        let end = min(scalars.count, first + 48)
        var out = String.UnicodeScalarView()
        if start > 0 { out.append("…") }
        var i = start
        while i < end {
            if let count = match(at: i), i + count <= end {
                out.append(contentsOf: String(SearchHit.matchStart).unicodeScalars)
                out.append(contentsOf: scalars[i..<(i + count)])
                out.append(contentsOf: String(SearchHit.matchEnd).unicodeScalars)
                i += count
            } else {
                out.append(scalars[i])
                i += 1
            }
        }
        if end < scalars.count || scalars.count == 1 << 16 { out.append("…") }
        return String(out)
    }

    /// Whether `path` (as the mount shows it) is a folder the index knows.
    ///
    /// - Throws: ``SQLiteError``.
    public func hasFolder(path: String) throws(SQLiteError) -> Bool {
        try !connection.prepare("SELECT 1 FROM folders WHERE path = ?").rows([.text(path)]) { $0.int(0) }.isEmpty
    }

    /// The `limit` most recently modified records of `recordType` (newest first), with their paths.
    ///
    /// - Throws: ``SQLiteError``.
    public func recent(recordType: String, limit: Int) throws(SQLiteError) -> [SearchHit] {
        try connection.prepare(
            """
            SELECT d.name, d.type, coalesce(f.path, ''), d.file_name, d.modified FROM docs d LEFT JOIN folders f ON f.name = d.folder
            WHERE d.type = ?1 ORDER BY d.modified DESC, d.name LIMIT ?2
            """
        ).rows([.text(recordType), .integer(Int64(max(0, min(limit, Int(Int32.max)))))]) { row in
            let folderPath = row.text(2)
            return SearchHit(
                name: row.text(0), recordType: row.text(1), path: folderPath.isEmpty ? row.text(3) : folderPath + "/" + row.text(3),
                modificationDate: row.isNull(4) ? nil : Date(timeIntervalSinceReferenceDate: row.double(4)), snippet: "", rank: 0)
        }
    }

    /// Records whose body holds each needle (already in ``Predicate/substringForm(_:)``), as of
    /// the returned token: a superset (every trigram of the needle is in the body); nil for a
    /// needle under three characters. `unreadable`: records indexed without text.
    ///
    /// - Throws: ``SQLiteError``.
    public func bodyCandidates(_ needles: [String]) throws(SQLiteError) -> (
        token: ChangeToken?, names: [Set<String>?], unreadable: Set<String>
    ) {
        try read { () throws(SQLiteError) in
            let token = try self.token()
            var names: [Set<String>?] = []
            let statement = try connection.prepare("SELECT d.name FROM grams JOIN docs d ON d.id = grams.rowid WHERE grams MATCH ?")
            for needle in needles {
                guard let expression = Self.trigramExpression(needle) else {
                    names.append(nil)
                    continue
                }
                names.append(Set(try statement.rows([.text(expression)]) { $0.text(0) }))
            }
            let unreadable = Set(try connection.prepare("SELECT name FROM docs WHERE unreadable != 0").rows { $0.text(0) })
            return (token, names, unreadable)
        }
    }

    /// `"abc" AND "bcd" AND ...` for the needle's trigrams (of Unicode scalars, as the trigram
    /// tokenizer splits); at most 32 of them, spread over the needle. Nil under 3 scalars.
    static func trigramExpression(_ needle: String) -> String? {
        let scalars = Array(needle.unicodeScalars)
        guard scalars.count >= 3 else { return nil }
        var grams: [String] = []
        var seen = Set<String>()
        let count = scalars.count - 2
        let step = max(1, count / 32)
        for start in stride(from: 0, to: count, by: step) {
            var gram = String.UnicodeScalarView()
            gram.append(contentsOf: scalars[start..<start + 3])
            let text = String(gram)
            if seen.insert(text).inserted { grams.append("\"" + text.replacingAll("\"", "\"\"") + "\"") }
        }
        return grams.joined(separator: " AND ")
    }
}

import CSQLite
import Foundation
import RecordStore

/// One search result.
public struct SearchHit: Sendable, Equatable {
    public var name: String
    public var recordType: String
    /// Its path as the mount shows it (folder path, `/`, file name).
    public var path: String
    public var modificationDate: Date?
    /// Body text around the matches, each match between ``SearchHit/matchStart`` and ``SearchHit/matchEnd``.
    public var snippet: String
    /// BM25 with the title weighted ten times the body (the `words` table's `rank`): lower is better.
    public var rank: Double

    /// Marks a match's start and end in ``snippet`` (control characters no note text shows).
    public static let matchStart: Character = "\u{2}"
    public static let matchEnd: Character = "\u{3}"
}

extension TextIndex {
    /// The records matching `query`, best first: at most `limit`, under `folder` (a path as the
    /// mount shows it; nil: everywhere).
    ///
    /// - Throws: ``SQLiteError`` (damage: rebuild the index).
    public func search(_ query: SearchQuery, folder: String? = nil, limit: Int) throws(SQLiteError) -> [SearchHit] {
        // First the best `limit` row IDs by rank alone: SQLite evaluates a result column for every
        // row it sorts, so a snippet there would be made for every match of a common word.
        var sql = "SELECT words.rowid, words.rank FROM words"
        var values: [SQLiteValue] = [.text(query.expression), .integer(Int64(max(0, min(limit, Int(Int32.max)))))]
        if let folder, !folder.isEmpty {
            sql += """
                 JOIN docs d ON d.id = words.rowid JOIN folders f ON f.name = d.folder
                WHERE words MATCH ?1 AND (f.path = ?3 OR substr(f.path, 1, length(?3) + 1) = ?3 || '/')
                """
            values.append(.text(folder))
        } else {
            sql += " WHERE words MATCH ?1"
        }
        sql += " ORDER BY words.rank LIMIT ?2"
        return try read { () throws(SQLiteError) -> [SearchHit] in
            let best = try connection.prepare(sql).rows(values) { ($0.int(0), $0.double(1)) }
            let describe = try connection.prepare(
                """
                SELECT d.name, d.type, coalesce(f.path, ''), d.file_name, d.modified, snippet(words, 1, char(2), char(3), '…', 16)
                FROM words JOIN docs d ON d.id = words.rowid LEFT JOIN folders f ON f.name = d.folder
                WHERE words MATCH ?1 AND words.rowid = ?2
                """)
            var hits: [SearchHit] = []
            for (rowID, rank) in best {
                let found = try describe.rows([.text(query.expression), .integer(rowID)]) { row in
                    let folderPath = row.text(2)
                    return SearchHit(
                        name: row.text(0), recordType: row.text(1), path: folderPath.isEmpty ? row.text(3) : folderPath + "/" + row.text(3),
                        modificationDate: row.isNull(4) ? nil : Date(timeIntervalSinceReferenceDate: row.double(4)), snippet: row.text(5),
                        rank: rank)
                }
                hits += found
            }
            return hits
        }
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

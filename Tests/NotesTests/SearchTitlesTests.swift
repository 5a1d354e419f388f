import Foundation
import SQLite
import TestSupport
import Testing

@testable import Index

/// The `titles` table (format 4): the title matches a common query ranks come from a list of
/// titles alone. It must match what `words`' title column matches, follow every save, rename and
/// delete, cost pages in proportion to the titles, and be added in place to an index of format 3.
@Suite struct SearchTitlesTests {
    static let pieces = ["alpha", "beta", "gamma", "delta", "café", "東京", "plan", "idea"]

    /// A random title of one to four pieces, some with a number.
    static func title(_ random: inout SeededGenerator) -> String {
        (0..<(1 + Int(random.next() % 4))).map { _ in
            let piece = pieces[Int(random.next() % UInt64(pieces.count))]
            return random.next() % 3 == 0 ? piece + " \(random.next() % 5)" : piece
        }.joined(separator: " ")
    }

    static func save(_ w: IndexWriter, _ i: Int, title: String, body: String) throws(SQLiteError) {
        try w.save(
            IndexedDocument(
                name: "note-\(i)", recordType: "Note", folder: nil, fileName: "\(title).md", title: title, body: body,
                modificationDate: Date(timeIntervalSinceReferenceDate: Double(i))))
    }

    static func rows(_ index: TextIndex, _ sql: String, _ query: String) throws -> Set<Int64> {
        Set(try index.connection.prepare(sql).rows([.text(query)]) { $0.int(0) })
    }

    /// After random saves, renames (a new title, the same body), edits and deletes, every query
    /// matches the same rows in `titles` as `title : (…)` does in `words`.
    @Test(arguments: [1, 2, 3] as [UInt64]) func titleMatchesAreThoseOfTheTitleColumn(seed: UInt64) throws {
        let index = try TextIndex.temporary()
        defer { index.close() }
        var random = SeededGenerator(state: seed)
        var bodies: [Int: String] = [:]
        for _ in 0..<6 {
            try index.update { (w) throws(SQLiteError) in
                for _ in 0..<150 {
                    let i = Int(random.next() % 300)
                    switch random.next() % 4 {
                    case 0 where bodies[i] != nil:
                        try w.delete("note-\(i)")
                        bodies[i] = nil
                    case 1 where bodies[i] != nil:  // a rename: the body stays
                        try Self.save(w, i, title: Self.title(&random), body: bodies[i] ?? "")
                    default:
                        let body = Self.title(&random) + " body \(i)"
                        bodies[i] = body
                        try Self.save(w, i, title: Self.title(&random), body: body)
                    }
                }
            }
        }
        let queries = [
            "alpha", "\"alpha beta\"", "cafe", "caf*", "al*", "alpha AND idea", "alpha OR 東京", "\"3\"", "plan NOT idea",
            "cjk : \"東京\"", "alpha AND cjk : \"東京\"", "body",
        ]
        for query in queries {
            let titles = try Self.rows(index, "SELECT rowid FROM titles WHERE titles MATCH ?1", query)
            let column = try Self.rows(index, "SELECT rowid FROM words WHERE words MATCH 'title : (' || ?1 || ')'", query)
            #expect(titles == column, "\(query)")
        }
        #expect(try !Self.rows(index, "SELECT rowid FROM titles WHERE titles MATCH ?1", "alpha").isEmpty)
        let contents = try index.contents()
        #expect(contents.titleRows == contents.textRows && contents.textRows == bodies.count)
        #expect(index.damage() == nil)
    }

    /// `common` is in the body of 10,000 notes, 100 times each, and in the title of two: a search
    /// for it reads fewer pages than `words`' title column alone walks to find those two (before
    /// the `titles` table, the search made that walk).
    @Test func aCommonWordsTitleMatchesAreFoundWithoutWalkingItsList() throws {
        let index = try TextIndex.temporary()
        defer { index.close() }
        let body = Array(repeating: "common", count: 100).joined(separator: " ")
        try index.update { (w) throws(SQLiteError) in
            for i in 0..<10_000 {
                try Self.save(w, i, title: i == 7 || i == 11 ? "Common ground \(i)" : "Note \(i)", body: body + " n\(i)")
            }
        }
        try index.connection.execute("PRAGMA cache_size = -65536")
        _ = index.connection.takeCacheMisses()
        let walked = try Self.rows(index, "SELECT rowid FROM words WHERE words MATCH 'title : (' || ?1 || ')'", "common")
        let walkMisses = index.connection.takeCacheMisses()
        #expect(walked == [8, 12])  // row ids: note 7 and note 11
        try index.connection.execute("PRAGMA shrink_memory")
        _ = index.connection.takeCacheMisses()
        let hits = try index.search(SearchQuery("common"), limit: 20, snippets: false)
        let searchMisses = index.connection.takeCacheMisses()
        #expect(Set(hits.prefix(2).map(\.name)) == ["note-7", "note-11"])
        #expect(walkMisses > 100, "the word's list spans \(walkMisses) pages")
        #expect(searchMisses < walkMisses, "the search read \(searchMisses) pages, the title column's walk \(walkMisses)")
    }

    /// An index of format 3 (no `titles` table) opened by this version gets the table filled from
    /// its own titles, in place: its documents and token stay, and its title matches rank first.
    @Test func anIndexOfFormat3GetsItsTitlesInPlace() throws {
        let db = makeTemporaryDirectory("titles-format3")
        defer { try? FileManager.default.removeItem(atPath: db) }
        var index = try TextIndex(databasePath: db, create: true)
        try index.update { (w) throws(SQLiteError) in
            for i in 0..<(TextIndex.rankedRows + 100) {
                try Self.save(w, i, title: i == 7 ? "Common ground" : "Note \(i)", body: "common n\(i)")
            }
            try w.setMeta("token", "kept")
        }
        try index.connection.execute(
            "DROP TABLE titles; UPDATE meta SET value = '3' WHERE key = 'format'")
        index.close()
        index = try TextIndex(databasePath: db, create: false)
        defer { index.close() }
        #expect(try index.meta("format") == String(TextIndex.formatVersion))
        #expect(try index.meta("token") == "kept")
        let contents = try index.contents()
        #expect(contents.documents.count == TextIndex.rankedRows + 100)
        #expect(contents.titleRows == contents.textRows)
        #expect(try index.search(SearchQuery("common"), limit: 5, snippets: false).first?.name == "note-7")
        #expect(index.damage() == nil)
    }
}

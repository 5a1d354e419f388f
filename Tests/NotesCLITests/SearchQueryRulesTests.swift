import Foundation
import TestSupport
import Testing

/// The query rules of `notesfs search` through the binary: punctuation and emoji are no words,
/// CJK text is found by substring, queries are bounded, and the small failures say what is wrong.
@Suite struct SearchQueryRulesTests {
    /// Paths `search` prints for `query` (`--json`); the exit status with them.
    func paths(_ query: [String], db: String) throws -> (status: Int32, paths: Set<String>, stderr: String) {
        let result = try notesfs(["search", "--json", "--limit", "0"] + query, db: db)
        let hits = (try? parseJSON(result.stdout) as? [[String: Any]]) ?? []
        return (result.status, Set(hits.compactMap { $0["path"] as? String }), result.stderr)
    }

    @Test func termsWithoutWordCharactersAreDropped() throws {
        let db = makeDatabasePath("search-punct")
        #expect(try notesfs(["note", "new", "List.md"], db: db, stdin: Data("session notes: milk and bread\n".utf8)).status == 0)
        #expect(try notesfs(["note", "new", "Radio.md"], db: db, stdin: Data("alpha bravo charlie\n".utf8)).status == 0)
        for query in ["milk & bread", "session – milk", "milk 🎉", "milk AND & bread", "\"&\" milk"] {
            let found = try paths([query], db: db)
            #expect(found.status == 0, "\(query)")
            #expect(found.paths == ["List.md"], "\(query)")
        }
        #expect(try paths(["alpha - bravo"], db: db).paths == ["Radio.md"])
        for query in ["&", "– 🎉 ++", "\"-\""] {
            let none = try notesfs(["search", query], db: db)
            #expect(none.status == 2, "\(query)")
            #expect(none.stderr.contains("no words"), "\(query): \(none.stderr)")
        }
    }

    @Test func chineseAndJapaneseAreFoundBySubstring() throws {
        let db = makeDatabasePath("search-cjk")
        #expect(try notesfs(["note", "new", "Trip.md"], db: db, stdin: Data("明日は東京に行きます。\n".utf8)).status == 0)
        #expect(try notesfs(["note", "new", "Case.md"], db: db, stdin: Data("iPhone用のケース\n".utf8)).status == 0)
        #expect(try notesfs(["note", "new", "北京.md"], db: db, stdin: Data("a city\n".utf8)).status == 0)
        for query in ["東京", "東京に", "明日は東京に行きます", "明", "行きます", "す", "東京 明日"] {
            #expect(try paths([query], db: db).paths == ["Trip.md"], "\(query)")
        }
        for query in ["ケース", "iphone", "iPhone用", "用の"] {
            #expect(try paths([query], db: db).paths == ["Case.md"], "\(query)")
        }
        #expect(try paths(["北京"], db: db).paths == ["北京.md"])
        // The snippet shows the match.
        let marked = try notesfs(["search", "東京", "--json"], db: db)
        let hit = try #require((try parseJSON(marked.stdout) as? [[String: Any]])?.first)
        #expect((hit["marked"] as? String)?.contains("**東京**") == true, "\(hit)")
        // Not a substring: the characters are there, not in this order or not together.
        for query in ["京東", "日東", "東京タワー"] {
            #expect(try paths([query], db: db).status == 1, "\(query)")
        }
        // Two runs of the text are not one: 東京 and に行 are found, "東京行" is not.
        #expect(try notesfs(["note", "new", "Split.md"], db: db, stdin: Data("東京, 京行\n".utf8)).status == 0)
        #expect(try paths(["東京行"], db: db).status == 1)
        #expect(try paths(["京 NOT 明日"], db: db).paths == ["Split.md", "北京.md"])
    }

    @Test func queriesAreBounded() throws {
        let db = makeDatabasePath("search-bounds")
        #expect(try notesfs(["note", "new", "W.md"], db: db, stdin: Data("word\n".utf8)).status == 0)
        let nested = String(repeating: "(", count: 3000) + "word" + String(repeating: ")", count: 3000)
        let deep = String(repeating: "(", count: 1000) + "word" + String(repeating: ")", count: 1000)
        let cases: [(String, String)] = [
            (nested, "bytes"), (deep, "nested"), (Array(repeating: "w", count: 2000).joined(separator: " "), "terms"),
            (String(repeating: "w", count: 96 * 1024), "bytes"),
        ]
        for (query, reason) in cases {
            let result = try notesfs(["search", query], db: db)
            #expect(result.status == 2, "\(reason): \(result.stderr)")
            #expect(result.stderr.contains(reason), "\(result.stderr)")
        }
        // The largest query allowed runs.
        let widest = Array(repeating: "word", count: 64).joined(separator: " ")
        #expect(try notesfs(["search", widest], db: db).status == 0)
        let deepest = String(repeating: "(", count: 16) + "word" + String(repeating: ")", count: 16)
        #expect(try notesfs(["search", deepest], db: db).status == 0)
    }

    @Test func missingFolderLeadingDashAndFakeMarks() throws {
        let db = makeDatabasePath("search-small")
        #expect(try notesfs(["folder", "new", "Work"], db: db).status == 0)
        #expect(try notesfs(["note", "new", "Work/A.md"], db: db, stdin: Data("alpha \u{2}fake\u{3} needle\n".utf8)).status == 0)
        #expect(try notesfs(["search", "alpha"], db: db).status == 0)  // the index is built: the fast path answers next
        let missing = try notesfs(["search", "alpha", "--folder", "Nope"], db: db)
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("Nope"), "\(missing.stderr)")
        #expect(try paths(["alpha", "--folder", "Work"], db: db).paths == ["Work/A.md"])
        let dash = try notesfs(["search", "-alpha"], db: db)
        #expect(dash.status == 2)
        #expect(dash.stderr.contains("-- -alpha"), "\(dash.stderr)")
        #expect(try paths(["--", "-alpha"], db: db).paths == ["Work/A.md"])
        // The note's own 0x02/0x03 never mark a match.
        let json = try notesfs(["search", "needle", "--json"], db: db)
        let hit = try #require((try parseJSON(json.stdout) as? [[String: Any]])?.first)
        let marked = try #require(hit["marked"] as? String)
        #expect(marked.contains("**needle**"), "\(marked)")
        #expect(!marked.contains("**fake**"), "\(marked)")
        #expect(!(try #require(hit["snippet"] as? String)).unicodeScalars.contains { $0.value < 0x20 })
    }
}

import Foundation
import Index
import TestSupport
import Testing

/// A query with more matches than ``TextIndex/rankedRows`` ranks some of them only: its hits still
/// all match, come in a fixed order, and number the limit; a rarer one is ranked in full.
@Suite struct SearchRankingTests {
    /// `rankedRows + 500` notes in two folders (Few: every tenth; Most: more than `rankedRows`),
    /// every one with "common" once in its text and `nN` (its number); note 7 (among the oldest
    /// rows) has "common" in its title, note 11 has it in its title and "excluded" in its text.
    /// Returns the index and each note's words.
    func corpus() throws -> (TextIndex, [String: String]) {
        let index = try TextIndex.temporary()
        var random = SeededGenerator(state: 7)
        let pieces = ["alpha", "beta", "gamma", "delta"]
        var texts: [String: String] = [:]
        try index.update { (w) throws(SQLiteError) in
            for i in 0..<(TextIndex.rankedRows + 500) {
                var words = ["common", "n\(i)"]
                for _ in 0..<(5 + Int(random.next() % 40)) { words.append(pieces[Int(random.next() % UInt64(pieces.count))]) }
                if i == 11 { words.append("excluded") }
                let text = words.joined(separator: " ")
                let title = i == 7 || i == 11 ? "Common ground \(i)" : "Note \(i)"
                texts["note-\(i)"] = title + " " + text
                try w.save(
                    IndexedDocument(
                        name: "note-\(i)", recordType: "Note", folder: i % 10 == 0 ? "few" : "most", fileName: "\(title).md", title: title,
                        body: text, modificationDate: Date(timeIntervalSinceReferenceDate: Double(i))))
            }
            try w.setFolderPaths(["few": "Few", "most": "Most"])
        }
        return (index, texts)
    }

    @Test func aWordInEveryNoteGivesTheLimitOfMatchingHitsInAFixedOrder() throws {
        let (index, texts) = try corpus()
        defer { index.close() }
        let query = try SearchQuery("common")
        let hits = try index.search(query, limit: 20, snippets: false)
        #expect(hits.count == 20)
        #expect(hits.allSatisfy { texts[$0.name]?.lowercased().contains("common") == true })
        #expect(Set(hits.map(\.name)).count == 20)
        // Best first: by rank, then by record name.
        #expect(hits.map(\.rank) == hits.map(\.rank).sorted())
        #expect(zip(hits, hits.dropFirst()).allSatisfy { $0.rank < $1.rank || ($0.rank == $1.rank && $0.name < $1.name) })
        // The same every time.
        let again = try index.search(query, limit: 20, snippets: false)
        #expect(again.map(\.name) == hits.map(\.name))
        // The notes with the word in their title, among the oldest rows, come first, as BM25 puts them.
        #expect(Set(hits.prefix(2).map(\.name)) == ["note-7", "note-11"])
    }

    @Test func everyMatchIsStillFoundOnceWithoutALimit() throws {
        let (index, texts) = try corpus()
        defer { index.close() }
        let all = try index.search(SearchQuery("common"), limit: nil, snippets: false)
        #expect(all.count == texts.count)
        #expect(Set(all.map(\.name)) == Set(texts.keys))
        // The ranked ones first (BM25 scores are below 0), then the rest with rank 0.
        let ranked = all.prefix { $0.rank < 0 }
        #expect(ranked.count >= TextIndex.rankedRows && ranked.count < all.count)
        #expect(all.dropFirst(ranked.count).allSatisfy { $0.rank == 0 })
        let limited = try index.search(SearchQuery("common"), limit: TextIndex.rankedRows + 100, snippets: false)
        #expect(limited.map(\.name) == Array(all.prefix(TextIndex.rankedRows + 100).map(\.name)))
    }

    @Test func aNotTermInTheTextKeepsATitleMatchOut() throws {
        let (index, _) = try corpus()
        defer { index.close() }
        let hits = try index.search(SearchQuery("common NOT excluded"), limit: nil, snippets: false)
        #expect(!hits.contains { $0.name == "note-11" })
        #expect(hits.first?.name == "note-7")
        #expect(hits.count == TextIndex.rankedRows + 499)
    }

    @Test func aFolderGivesTheLimitOfItsOwnMatches() throws {
        let (index, _) = try corpus()
        defer { index.close() }
        let hits = try index.search(SearchQuery("common"), folder: "Most", limit: 20, snippets: false)
        #expect(hits.count == 20)
        #expect(hits.allSatisfy { $0.path.hasPrefix("Most/") })
        #expect(Set(hits.prefix(2).map(\.name)) == ["note-7", "note-11"])
        let most = try index.search(SearchQuery("common"), folder: "Most", limit: nil, snippets: false)
        #expect(most.count == (TextIndex.rankedRows + 500) * 9 / 10)
        #expect(Set(most.map(\.name)).count == most.count)
        let few = try index.search(SearchQuery("common"), folder: "Few", limit: nil, snippets: false)
        #expect(few.count == (TextIndex.rankedRows + 500) / 10)
        #expect(few.allSatisfy { $0.path.hasPrefix("Few/") && $0.rank < 0 })
    }

    /// Under the bound every match is ranked: the order is BM25's, then the record name's.
    @Test func aRarerQueryIsRankedInFull() throws {
        let (index, texts) = try corpus()
        defer { index.close() }
        let hits = try index.search(SearchQuery("n1* common"), limit: nil, snippets: false)
        let expected = texts.keys.filter { $0.hasPrefix("note-1") }
        #expect(hits.count == expected.count && hits.count <= TextIndex.rankedRows)
        #expect(hits.allSatisfy { $0.rank < 0 })
        #expect(zip(hits, hits.dropFirst()).allSatisfy { $0.rank < $1.rank || ($0.rank == $1.rank && $0.name < $1.name) })
    }

    /// A query of few matches makes its hits' snippets in one pass over them: each hit gets its own
    /// (the number a note alone holds, marked), as the lookup of each hit gives it.
    @Test(arguments: ["n1*", "n1* common", "common n12*"])
    func snippetsOfAQueryOfFewMatchesAreEachHitsOwn(query: String) throws {
        let (index, _) = try corpus()
        defer { index.close() }
        let (start, end) = (String(SearchHit.matchStart), String(SearchHit.matchEnd))
        func unmarked(_ text: String?) -> String? { text?.filter { $0 != SearchHit.matchStart && $0 != SearchHit.matchEnd } }
        let hits = try index.search(SearchQuery(query), limit: 30, snippets: true)
        #expect(hits.count == 30)
        for hit in hits {
            let number = hit.name.dropFirst("note-".count)
            #expect(hit.snippet.contains(start + "n\(number)" + end), "\(hit.name): \(hit.snippet)")
        }
        // The same text as a lookup of that hit alone (a query of one match makes no pass).
        for hit in hits.prefix(5) {
            let alone = try index.search(SearchQuery("n\(hit.name.dropFirst("note-".count))"), limit: 1, snippets: true)
            #expect(alone.first?.name == hit.name)
            #expect(unmarked(alone.first?.snippet) == unmarked(hit.snippet))
        }
    }
}

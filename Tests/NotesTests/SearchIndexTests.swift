import Foundation
import Index
import Notes
import RecordStore
import SQLite
import TestSupport
import Testing

@Suite struct SearchIndexTests {
    /// A random corpus with accents, other scripts, punctuation and case; every `CONTAINS` and
    /// `CONTAINS[c]` query answered with the index's candidates returns exactly what a full scan
    /// returns (the same database without the candidate source).
    @Test(arguments: [1, 2, 3]) func narrowedQueriesEqualAScan(seed: UInt64) async throws {
        let notes = try makeManager()
        var random = SeededGenerator(state: seed)
        let pieces = [
            "milk", "Bread", "crème", "CRÈME", "creme", "e\u{301}te\u{301}", "été", "straße", "STRASSE", "İstanbul", "ﬁle", "file",
            "naïve", "日本語", "テキスト", "😀", "c++", "don't", "a.b", "password", "sword", "word", "ΣΊΣΥΦΟΣ", "σίσυφος", "Kelvin \u{212A}",
            "k", "--", "\"q\"", "\\", "%", "_", "ǅ", "ǆ",
        ]
        var texts: [String] = []
        for i in 0..<150 {
            let words = (0..<Int(random.next() % 12)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }
            let separator = [" ", "", "\n", ", "][Int(random.next() % 4)]
            let text = words.joined(separator: separator)
            texts.append(text)
            _ = try await notes.save(note: Note(title: "N\(i)", text: text))
        }
        let index = NotesSearchIndex(database: notes.database)
        try index.catchUp()
        // Some changes after the index caught up: they must be found through the store's tail.
        _ = try await notes.save(note: Note(title: "late", text: "late password milk Crème"))
        var needles = pieces + ["ilk", "assw", "rèm", "REM", "sse", "STR", "nb", "é", "ord", "d c", "o", "ssw", "x", "日本", "本語テ"]
        for text in texts.prefix(30) where text.count > 4 {
            let start = text.index(text.startIndex, offsetBy: Int(random.next() % UInt64(text.count - 3)))
            needles.append(String(text[start...].prefix(1 + Int(random.next() % 6))))
        }
        for needle in needles {
            for options in ["", "[c]"] {
                let predicate = try Predicate(format: "text CONTAINS\(options) %@", .string(needle))
                let query = Query(recordType: Note.recordType, predicate: predicate)
                notes.database.setCandidateSource(index)
                let narrowed = Set(notes.database.queryMetadata(query).map(\.recordID))
                notes.database.setCandidateSource(nil)
                let scanned = Set(notes.database.queryMetadata(query).map(\.recordID))
                #expect(narrowed == scanned, "text CONTAINS\(options) \(needle.debugDescription)")
            }
        }
        // An OR and an AND narrow too, and agree.
        for format in ["text CONTAINS[c] 'milk' AND text CONTAINS 'Bread'", "text CONTAINS 'sword' OR text CONTAINS[c] 'ÉTÉ'"] {
            let query = Query(recordType: Note.recordType, predicate: try Predicate(format: format))
            notes.database.setCandidateSource(index)
            let narrowed = Set(notes.database.queryMetadata(query).map(\.recordID))
            notes.database.setCandidateSource(nil)
            #expect(narrowed == Set(notes.database.queryMetadata(query).map(\.recordID)), "\(format)")
        }
    }

    /// The candidate source really narrows: a needle in one note yields that note alone.
    @Test func candidatesAreNarrow() async throws {
        let notes = try makeManager()
        for i in 0..<50 { _ = try await notes.save(note: Note(title: "t\(i)", text: "common words \(i)")) }
        _ = try await notes.save(note: Note(title: "x", text: "a rare zebrafish"))
        let index = NotesSearchIndex(database: notes.database)
        try index.catchUp()
        let answer = try #require(index.candidates(recordType: Note.recordType, substrings: [("text", Predicate.substringForm("ZEBRA"))]))
        #expect(answer.names.first??.count == 1)
        #expect(index.candidates(recordType: Folder.recordType, substrings: [("text", "zebra")]) == nil)
    }

    @Test func searchRanksFoldsAndSeesEveryCommit() async throws {
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        _ = try await notes.save(note: Note(title: "Groceries", text: "milk, bread and Crème fraîche", folder: work.recordID))
        _ = try await notes.save(note: Note(title: "Bread recipes", text: "flour water salt"))
        _ = try await notes.save(note: Note(title: "Other", text: "nothing to see"))
        // Title matches rank above text matches.
        #expect(try await notes.search("bread").map(\.title) == ["Bread recipes", "Groceries"])
        #expect(try await notes.search("creme").map(\.title) == ["Groceries"])
        #expect(try await notes.search("\"milk, bread\"").map(\.title) == ["Groceries"])
        #expect(try await notes.search("fla* OR flo*").map(\.title) == ["Bread recipes"])
        #expect(try await notes.search("bread NOT milk").map(\.title) == ["Bread recipes"])
        // A save and a delete are seen by the next search at once.
        var other = try #require(try await notes.fetchNotes(for: nil).first { $0.title == "Other" })
        other.text = "now with bread"
        _ = try await notes.save(note: other)
        #expect(Set(try await notes.search("bread").map(\.title)) == ["Bread recipes", "Groceries", "Other"])
        try await notes.delete(folder: work)
        #expect(try await notes.search("milk").isEmpty)
        await #expect(throws: NotesError.self) { try await notes.search("(unclosed") }
    }

    @Test func pathsFollowRenamesAndNameCollisions() async throws {
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        _ = try await notes.save(note: Note(title: "Plan", text: "alpha", folder: work.recordID))
        let index = NotesSearchIndex(database: notes.database)
        let query = try SearchQuery("alpha")
        #expect(try index.search(query, limit: 10).hits.map(\.path) == ["Work/Plan.md"])
        var renamed = try await notes.fetch(Folder.self, id: work.recordID)
        renamed.name = "Job"
        _ = try await notes.save(renamed)
        #expect(try index.search(query, limit: 10).hits.map(\.path) == ["Job/Plan.md"])
        // A second "Plan" created later takes a suffix; the first keeps its name.
        let second = try await notes.save(note: Note(title: "Plan", text: "alpha beta", folder: work.recordID))
        let paths = try index.search(query, limit: 10).hits.map(\.path)
        #expect(paths.contains("Job/Plan.md"))
        #expect(paths.contains { $0.hasPrefix("Job/Plan (") && $0.hasSuffix(").md") })
        #expect(try index.search(query, folder: "Job", limit: 10).hits.count == 2)
        #expect(try index.search(query, folder: "Jo", limit: 10).hits.isEmpty)
        _ = try await notes.delete(second)
        #expect(try index.search(query, limit: 10).hits.map(\.path) == ["Job/Plan.md"])
    }

    /// A catch-up after a rename names the renamed note and the namesakes of its old and new names
    /// from those names alone: it reads a few records' metadata, not its folder's listing (each
    /// rename in a mount caught up twice a listing of the folder: 1.2 ms a rename in a folder of
    /// 150). The names are still those the folder's listing gives.
    @Test func aCatchUpAfterARenameReadsTheNamesakesNotTheFolder() async throws {
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        let notesInWork = (0..<300).map { Note(title: "n\($0)", text: "filler", folder: work.recordID).record }
        try notes.database.modify(saving: notesInWork)
        let first = try await notes.save(note: Note(title: "Plan", text: "alpha one", folder: work.recordID))
        let second = try await notes.save(note: Note(title: "Plan", text: "alpha two", folder: work.recordID))
        let index = NotesSearchIndex(database: notes.database)
        try index.catchUp()
        try notes.database.checkpoint()  // the records are read from the index file from here on
        let query = try SearchQuery("alpha")
        func paths() throws -> [String: String] {
            Dictionary(try index.search(query, limit: 10).hits.map { ($0.name, $0.path) }, uniquingKeysWith: { a, _ in a })
        }
        let before = try paths()
        #expect(before[first.recordID.recordName] == "Work/Plan.md")
        #expect(before[second.recordID.recordName]?.hasPrefix("Work/Plan (") == true)

        // The first Plan renamed: it becomes Goal.md, and the second Plan, alone now, Plan.md.
        var renamed = first
        renamed.title = "Goal"
        _ = try await notes.save(renamed)
        let read = notes.database.metadataRowsRead
        try index.catchUp()
        #expect(notes.database.metadataRowsRead - read < 100, "\(notes.database.metadataRowsRead - read) rows read")
        let after = try paths()
        #expect(after[first.recordID.recordName] == "Work/Goal.md")
        #expect(after[second.recordID.recordName] == "Work/Plan.md")
        let contents = FolderContents(database: notes.database)
        for (name, path) in after { #expect(contents.path(of: RecordID(recordName: name)) == path) }
        // Its words and trigrams follow: found by its new title, by a piece of its body (the
        // trigram rows kept through the rename), not by its old title.
        #expect(try index.search(SearchQuery("goal"), limit: 10).hits.map(\.name) == [first.recordID.recordName])
        #expect(try index.search(SearchQuery("plan"), limit: 10).hits.map(\.name) == [second.recordID.recordName])
        let pieces = try #require(index.candidates(recordType: Note.recordType, substrings: [("text", Predicate.substringForm("HA ON"))]))
        #expect(pieces.names.first??.contains(first.recordID.recordName) == true)
        var edited = try await notes.fetch(Note.self, id: first.recordID)
        edited.text = "omega only"
        _ = try await notes.save(edited)
        try index.catchUp()
        let gone = index.candidates(recordType: Note.recordType, substrings: [("text", Predicate.substringForm("HA ON"))])
        #expect(gone?.names.first??.isEmpty == true)
        #expect(try index.search(SearchQuery("omega"), limit: 10).hits.map(\.name) == [first.recordID.recordName])

        // A third Plan, younger: it takes a suffix (the folder is listed: two namesakes).
        let third = try await notes.save(note: Note(title: "Plan", text: "alpha three", folder: work.recordID))
        try index.catchUp()
        let last = try paths()
        #expect(last[second.recordID.recordName] == "Work/Plan.md")
        #expect(last[third.recordID.recordName] == FolderContents(database: notes.database).path(of: third.recordID))
        #expect(last[third.recordID.recordName]?.hasPrefix("Work/Plan (") == true)
    }

    /// A garbage index file is detected and rebuilt; searches answer correctly.
    @Test func aDamagedIndexIsRebuilt() async throws {
        let notes = try makeManager()
        _ = try await notes.save(note: Note(title: "One", text: "needle in a haystack"))
        let index = NotesSearchIndex(database: notes.database)
        try index.catchUp()
        let file = TextIndex.path(forDatabaseAt: notes.database.path)
        for damage in [Data(repeating: 0x41, count: 8192), Data()] {
            for suffix in ["-wal", "-shm"] { unlink(file + suffix) }
            try damage.write(to: URL(fileURLWithPath: file))
            let fresh = NotesSearchIndex(database: notes.database)
            let results = try fresh.search(try SearchQuery("needle"), limit: 10)
            #expect(results.hits.map(\.path) == ["One.md"])
            #expect(try TextIndex(databasePath: notes.database.path, create: false).documentCount() == 1)
        }
    }

    /// A build interrupted between batches (as by kill -9) is continued, not restarted.
    @Test func anInterruptedBuildContinues() async throws {
        let notes = try makeManager()
        let count = NotesSearchIndex.buildBatch * 2 + 10
        var records: [Record] = []
        for i in 0..<count { records.append(Note(title: "n\(i)", text: "word\(i) shared").record) }
        _ = try notes.database.modify(saving: records)
        let index = NotesSearchIndex(database: notes.database)
        var seen: [Int] = []
        try index.catchUp { done, _ in seen.append(done) }
        #expect(seen.first == 0 && seen.last == count)
        // Pretend a build stopped after its first batch: the next catch-up starts from the cursor.
        let text = try TextIndex(databasePath: notes.database.path, create: false)
        let names = try text.update { (w) throws(SQLiteError) -> [String] in
            let sorted = try w.documentNames().sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for name in sorted.dropFirst(NotesSearchIndex.buildBatch) { try w.delete(name) }
            try w.setMeta("building", notes.database.currentToken.stringValue)
            try w.setMeta("cursor", sorted[NotesSearchIndex.buildBatch - 1])
            try w.setToken(nil)
            return sorted
        }
        var resumed: [Int] = []
        try NotesSearchIndex(database: notes.database).catchUp { done, _ in resumed.append(done) }
        #expect(resumed.first == NotesSearchIndex.buildBatch)
        #expect(try text.documentCount() == names.count)
        #expect(try text.token() == notes.database.currentToken)
        #expect(try NotesSearchIndex(database: notes.database).search(try SearchQuery("shared"), limit: 0).hits.isEmpty)
        #expect(try NotesSearchIndex(database: notes.database).search(try SearchQuery("shared"), limit: count).hits.count == count)
    }

    /// A build leaves out the indexes by folder, path, link key, date, tag and property while it
    /// writes its documents (their keys come in random order: at 1,000,000 notes each transaction
    /// rewrote most of their pages) and makes them at its end. An index opened meanwhile, as another
    /// process opens it, does not make them either.
    @Test func aBuildMakesItsLookupIndexesAtItsEnd() async throws {
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        var records: [Record] = []
        for i in 0..<(NotesSearchIndex.buildBatch + 10) {
            let note = Note(title: "n\(i)", text: "see [[n\(i + 1)]] #tag\(i % 7)", folder: i % 2 == 0 ? work.recordID : nil)
            records.append(note.record)
        }
        _ = try notes.database.modify(saving: records)
        let file = TextIndex.path(forDatabaseAt: notes.database.path)
        func lookupIndexes() throws -> Set<String> {
            let connection = try SQLiteConnection(path: file, create: false, readOnly: true)
            defer { connection.close() }
            let names = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").rows { $0.text(0) }
            return Set(names).intersection(["docs_folder", "docs_name_key", "docs_file", "docs_modified", "links_key", "tags_folded"])
        }
        var during: [Set<String>] = []
        var openedDuring = false
        try NotesSearchIndex(database: notes.database).catchUp { done, total in
            guard done > 0, done < total else { return }
            if !openedDuring, let opened = try? TextIndex(databasePath: notes.database.path, create: false) {
                opened.close()
                openedDuring = true
            }
            during.append((try? lookupIndexes()) ?? ["unreadable"])
        }
        #expect(openedDuring)
        #expect(!during.isEmpty && during.allSatisfy(\.isEmpty), "\(during)")
        #expect(try lookupIndexes().count == 6)
        // They answer: a link's target by path, a tag.
        #expect(try await notes.backlinks(of: try Note(record: records[5])).map(\.sourcePath) == ["Work/n4.md"])
        #expect(try await notes.notes(tagged: "tag3").count == (NotesSearchIndex.buildBatch + 10 + 3) / 7)
    }
}

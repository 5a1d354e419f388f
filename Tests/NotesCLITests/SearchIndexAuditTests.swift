import Foundation
import TestSupport
import Testing

/// `fsck` compares the full-text index with the records: a token ahead of the journal and rows
/// missing from its tables are problems (exit 4) that `--repair` fixes, through the binary.
@Suite struct SearchIndexAuditTests {
    /// Paths `search` prints for `query` (`--json`).
    func paths(_ query: [String], db: String) throws -> Set<String> {
        let result = try notesfs(["search", "--json", "--limit", "0"] + query, db: db)
        let hits = (try? parseJSON(result.stdout) as? [[String: Any]]) ?? []
        return Set(hits.compactMap { $0["path"] as? String })
    }

    static let sqlite3 = "/usr/bin/sqlite3"

    /// An index whose token a damage set past the journal: fsck says so, and a search still finds
    /// a note added after it (the index is rebuilt, not trusted).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: sqlite3))) func anIndexAheadOfTheJournalIsRebuilt() throws {
        let db = makeDatabasePath("search-ahead")
        #expect(try notesfs(["note", "new", "One.md"], db: db, stdin: Data("first\n".utf8)).status == 0)
        #expect(try notesfs(["reindex"], db: db).status == 0)
        let file = db + "/indexes/text.sqlite"
        let set = try run(
            Self.sqlite3, [file, "UPDATE meta SET value = substr(value, 1, instr(value, ':')) || '999999' WHERE key = 'token'"])
        #expect(set.status == 0, "\(set.stderr)")
        let check = try notesfs(["fsck"], db: db)
        #expect(check.status == 4, "\(check.out)")
        #expect(check.out.contains("ahead of the journal"), "\(check.out)")
        #expect(try notesfs(["note", "new", "Two.md"], db: db, stdin: Data("second\n".utf8)).status == 0)
        #expect(try paths(["second"], db: db) == ["Two.md"])
        #expect(try notesfs(["fsck"], db: db).status == 0)
    }

    /// Rows deleted from the index's tables: fsck compares the index with the records and says
    /// so (exit 4); --repair rebuilds it and every note is found again.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: sqlite3)), arguments: ["words", "docs"])
    func rowsMissingFromTheIndexAreFound(table: String) throws {
        let source = makeTemporaryDirectory("search-rows-src")
        for i in 0..<30 { try Data("common \(i)\n".utf8).write(to: URL(fileURLWithPath: "\(source)/n\(i).md")) }
        let db = makeDatabasePath("search-rows")
        #expect(try notesfs(["import", source], db: db).status == 0)
        #expect(try notesfs(["reindex"], db: db).status == 0)
        #expect(try notesfs(["fsck"], db: db).status == 0)
        let file = db + "/indexes/text.sqlite"
        let rowID = table == "words" ? "rowid" : "id"
        let removed = try run(Self.sqlite3, [file, "DELETE FROM \(table) WHERE \(rowID) IN (SELECT \(rowID) FROM \(table) LIMIT 4)"])
        #expect(removed.status == 0, "\(removed.stderr)")
        let check = try notesfs(["fsck"], db: db)
        #expect(check.status == 4, "\(check.out)")
        #expect(check.out.contains("search index"), "\(check.out)")
        #expect(try notesfs(["fsck", "--repair"], db: db).status == 0)
        #expect(try notesfs(["fsck"], db: db).status == 0)
        #expect(try paths(["common"], db: db).count == 30)
    }

    /// An index of an older format (after an upgrade) is no problem: it is rebuilt at first use.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: sqlite3))) func anIndexOfAnOlderFormatIsRebuiltNotReported() throws {
        let db = makeDatabasePath("search-format")
        #expect(try notesfs(["note", "new", "One.md"], db: db, stdin: Data("first\n".utf8)).status == 0)
        #expect(try notesfs(["reindex"], db: db).status == 0)
        let file = db + "/indexes/text.sqlite"
        #expect(try run(Self.sqlite3, [file, "UPDATE meta SET value = '1' WHERE key = 'format'"]).status == 0)
        let check = try notesfs(["fsck"], db: db)
        #expect(check.status == 0, "\(check.out)")
        #expect(try paths(["first"], db: db) == ["One.md"])
        #expect(try run(Self.sqlite3, [file, "SELECT value FROM meta WHERE key = 'format'"]).out.hasPrefix("4"))  // TextIndex.formatVersion
    }
}

import Foundation
import RecordStore
import TestSupport
import Testing

@Suite struct ListAndQueryTests {
    @Test func listLongAndDuplicates() throws {
        let db = makeDatabasePath("ls")
        try notesfs(["folder", "new", "Work"], db: db)
        try notesfs(["note", "new", "Work/Plan", "--text", "12345"], db: db)
        try notesfs(["note", "new", "Work/Empty", "--text", ""], db: db)
        let long = try notesfs(["ls", "-l", "Work"], db: db)
        #expect(long.status == 0)
        #expect(long.lines.count == 2)
        #expect(long.lines[0].hasPrefix("0  20"))
        #expect(long.lines[0].hasSuffix("  Empty.md"))
        #expect(long.lines[1].hasPrefix("5  20"))
        #expect(long.lines[1].hasSuffix("  Plan.md"))
        let single = try notesfs(["ls", "Work/Plan"], db: db)
        #expect(single.out == "Work/Plan.md\n")
        #expect(try notesfs(["ls", "Nope"], db: db).status == 1)

        // Two notes with one title (saved through the store, as the mount or a sync could):
        // the earlier keeps the name, the later gets a suffix from its record name.
        do {
            let store = try RecordDatabase(path: db, backgroundThread: false)
            for (name, text) in [("first-note", "one"), ("SECOND-note-0001", "two")] {
                var note = Record(recordType: "Note", recordID: RecordID(recordName: name))
                note["title"] = "Dup"
                note["text"] = .string(text)
                try store.modify(saving: [note])
            }
            try store.close()
        }
        #expect(try notesfs(["ls"], db: db).out == "Dup (second).md\nDup.md\nWork/\n")
        #expect(try notesfs(["note", "cat", "Dup"], db: db).out == "one")
        #expect(try notesfs(["note", "cat", "Dup (second).md"], db: db).out == "two")
    }

    @Test func queryFindsSortsAndLimits() throws {
        let db = makeDatabasePath("query")
        for (title, text) in [("alpha", "a"), ("beta", "b"), ("Alphabet", "c"), ("gamma", "d")] {
            #expect(try notesfs(["note", "new", title, "--text", text], db: db).status == 0)
        }
        let found = try notesfs(["query", "title BEGINSWITH[c] 'alpha'", "--sort", "title"], db: db)
        #expect(found.status == 0)
        #expect(found.lines.map { $0.split(separator: "\t").last.map(String.init) } == ["Alphabet.md", "alpha.md"])
        let sorted = try notesfs(["query", "TRUEPREDICATE", "--sort", "-modificationDate", "--limit", "2"], db: db)
        #expect(sorted.lines.map { $0.split(separator: "\t").last.map(String.init) } == ["gamma.md", "Alphabet.md"])
        let json = try parseJSON(try notesfs(["query", "text == 'b'", "--json"], db: db).stdout) as? [[String: Any]]
        #expect(json?.count == 1)
        #expect((json?.first?["fields"] as? [String: Any])?["title"] as? String == "beta")
        #expect(json?.first?["path"] as? String == "beta.md")
        #expect(try notesfs(["query", "TRUEPREDICATE", "--type", "Folder"], db: db).out == "")
    }

    @Test(arguments: [("title ==== 'x'", 9), ("title == 'x' AND", 17), ("(title == 'x'", 14), ("title ~ 3", 7)])
    func syntaxErrorShowsACaret(_ predicate: String, _ column: Int) throws {
        let db = makeDatabasePath("syntax")
        try notesfs(["folder", "new", "F"], db: db)
        let result = try notesfs(["query", predicate], db: db)
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 4)
        #expect(lines[0].hasPrefix("notesfs: query: syntax error at column \(column): "))
        #expect(lines[1] == "    " + predicate)
        #expect(lines[2] == String(repeating: " ", count: 4 + column - 1) + "^")
        #expect(result.stdout.isEmpty)
    }

    @Test func changesSinceAToken() throws {
        let db = makeDatabasePath("changes")
        try notesfs(["note", "new", "One", "--text", "1"], db: db)
        let first = try notesfs(["changes"], db: db)
        #expect(first.lines.count == 2)
        #expect(first.lines[0].hasPrefix("changed\tNote\t"))
        #expect(first.lines[0].hasSuffix("\tOne.md"))
        let token = String(try #require(first.lines.last?.split(separator: "\t").last))
        try notesfs(["note", "new", "Two", "--text", "2"], db: db)
        try notesfs(["note", "rm", "One"], db: db)
        // The last version of the deleted note is kept (note history): a change of its own.
        let next = try notesfs(["changes", "--since", token], db: db).lines.filter { !$0.hasPrefix("changed\tVersion\t") }
        #expect(next.count == 3)
        #expect(next[0].hasSuffix("\tTwo.md"))
        #expect(next[1].hasPrefix("deleted\t"))
        #expect(next[2].hasPrefix("token\t"))
        let json = try parseJSON(try notesfs(["changes", "--json", "--since", token], db: db).stdout) as? [String: Any]
        #expect((json?["deleted"] as? [String])?.count == 1)
        #expect((json?["changed"] as? [[String: Any]])?.first { $0["recordType"] as? String == "Note" }?["path"] as? String == "Two.md")
        let foreign = try notesfs(["changes", "--since", "another-database:3"], db: db)
        #expect(foreign.status == 3)
    }
}

extension ListAndQueryTests {
    /// Thousands of `!` or `(` once crashed the parser's recursion (SIGSEGV): now a syntax error, exit 2.
    @Test(arguments: [
        (String(repeating: "!", count: 6_000) + "title == \"x\"", 101),
        (String(repeating: "(", count: 10_000) + "title == 'x'" + String(repeating: ")", count: 10_000), 101),
    ])
    func deepNestingIsASyntaxError(_ predicate: String, _ column: Int) throws {
        let db = makeDatabasePath("nesting")
        try notesfs(["folder", "new", "F"], db: db)
        let result = try notesfs(["query", predicate], db: db)
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("notesfs: query: syntax error at column \(column): predicate nests deeper than 100 levels"))
        #expect(result.stdout.isEmpty)
    }
}

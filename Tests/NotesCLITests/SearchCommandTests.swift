import Foundation
import TestSupport
import Testing

@Suite struct SearchCommandTests {
    /// `notesfs search` through the binary: paths, exit status 1 on no match (as grep), JSON,
    /// --folder, --limit, a syntax error (exit 2), and every commit seen by the next search.
    @Test func searchThroughTheBinary() throws {
        let db = makeDatabasePath("search")
        #expect(try notesfs(["folder", "new", "Work"], db: db).status == 0)
        #expect(try notesfs(["note", "new", "Work/Crème brûlée.md"], db: db, stdin: Data("milk, sugar and eggs\n".utf8)).status == 0)
        #expect(try notesfs(["note", "new", "Shopping.md"], db: db, stdin: Data("bread and MILK\n".utf8)).status == 0)
        let first = try notesfs(["search", "creme"], db: db)
        #expect(first.status == 0)
        #expect(first.out.hasPrefix("'Work/Crème brûlée.md'  ") || first.out.hasPrefix("Work/Crème brûlée.md  "))
        let both = try notesfs(["search", "milk", "--json"], db: db)
        let hits = try #require(try parseJSON(both.stdout) as? [[String: Any]])
        #expect(Set(hits.compactMap { $0["path"] as? String }) == ["Work/Crème brûlée.md", "Shopping.md"])
        #expect(hits.allSatisfy { ($0["marked"] as? String)?.lowercased().contains("**milk**") == true })
        #expect(
            try notesfs(["search", "milk", "--folder", "Work"], db: db).out.components(separatedBy: "\n").first?.contains("Work/") == true)
        #expect(try notesfs(["search", "milk", "--limit", "1", "--json"], db: db).out.components(separatedBy: "\"path\"").count == 2)
        let none = try notesfs(["search", "zebra"], db: db)
        #expect(none.status == 1)
        #expect(none.out.isEmpty && none.stderr.isEmpty)
        #expect(try notesfs(["search", "milk AND"], db: db).status == 2)
        #expect(try notesfs(["search", "milk", "--folder", "Nowhere"], db: db).status == 1)
        // A change by another process is seen at once (the index is behind the journal: caught up).
        #expect(try notesfs(["note", "new", "Zoo.md"], db: db, stdin: Data("a zebra\n".utf8)).status == 0)
        #expect(try notesfs(["search", "zebra"], db: db).out.contains("Zoo.md"))
        #expect(try notesfs(["note", "rm", "Zoo.md"], db: db).status == 0)
        #expect(try notesfs(["search", "zebra"], db: db).status == 1)
        // A note's control characters (an escape sequence, a C1 CSI) never reach the output.
        #expect(try notesfs(["note", "new", "Esc.md"], db: db, stdin: Data("evil \u{1B}[31m red \u{9B}2J clear\n".utf8)).status == 0)
        let escaped = try notesfs(["search", "evil"], db: db)
        #expect(escaped.status == 0)
        #expect(!escaped.out.unicodeScalars.contains { $0.value == 0x1B || (0x80...0x9F).contains($0.value) })
        #expect(try notesfs(["note", "rm", "Esc.md"], db: db).status == 0)
        // query's CONTAINS uses the index and agrees with what is there.
        let query = try notesfs(["query", "text CONTAINS[c] 'ilk'"], db: db)
        #expect(query.out.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 2)
    }

    /// A damaged index file is reported by fsck, rebuilt by --repair; search answers meanwhile.
    @Test func fsckChecksAndRepairsTheIndex() throws {
        let db = makeDatabasePath("search-fsck")
        #expect(try notesfs(["note", "new", "One.md"], db: db, stdin: Data("needle\n".utf8)).status == 0)
        #expect(try notesfs(["reindex"], db: db).status == 0)
        #expect(try notesfs(["fsck"], db: db).status == 0)
        let file = db + "/indexes/text.sqlite"
        try Data(repeating: 0x5A, count: 4096).write(to: URL(fileURLWithPath: file))
        let check = try notesfs(["fsck"], db: db)
        #expect(check.status == 4)
        #expect(check.out.contains("search index"))
        #expect(try notesfs(["fsck", "--repair"], db: db).status == 0)
        #expect(try notesfs(["fsck"], db: db).status == 0)
        try Data(repeating: 0x5A, count: 4096).write(to: URL(fileURLWithPath: file))
        #expect(try notesfs(["search", "needle"], db: db).out.contains("One.md"))
    }
}

@Suite struct SearchKillTests {
    /// `kill -9` of a build at random moments: the next search continues it and answers exactly
    /// what the notes hold (every note has "common", every seventh "rare").
    @Test(.tags(.slow), .notInFastRuns) func aKilledBuildContinuesAndAnswersCorrectly() throws {
        let source = makeTemporaryDirectory("search-kill-src")
        let count = 3500
        for i in 0..<count {
            let text = "note \(i) common" + (i % 7 == 0 ? " rare" : "") + "\n"
            try Data(text.utf8).write(to: URL(fileURLWithPath: "\(source)/n\(i).md"))
        }
        let db = makeDatabasePath("search-kill")
        #expect(try notesfs(["import", source], db: db).status == 0)
        for delay in [30_000, 120_000, 250_000] as [useconds_t] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: notesfsBinary)
            process.arguments = ["--db", db, "reindex", "-q"]
            try process.run()
            usleep(delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let rare = try notesfs(["search", "rare", "--limit", "0", "--json"], db: db)
        #expect(rare.status == 0)
        let hits = try #require(try parseJSON(rare.stdout) as? [[String: Any]])
        #expect(hits.count == (count + 6) / 7)
        #expect(Set(hits.compactMap { $0["path"] as? String }).count == hits.count)
        let all = try #require(
            try parseJSON(try notesfs(["search", "common", "--limit", "0", "--json"], db: db).stdout) as? [[String: Any]])
        #expect(all.count == count)
        #expect(try notesfs(["fsck"], db: db).status == 0)
    }
}

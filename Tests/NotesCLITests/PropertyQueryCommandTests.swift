import Foundation
import TestSupport
import Testing

/// `notesfs query` over front-matter properties, through the binary.
@Suite struct PropertyQueryCommandTests {
    static func seed(_ db: String) throws {
        #expect(try notesfs(["folder", "new", "Work"], db: db).status == 0)
        let notes = [
            ("Work/Plan.md", "---\nstatus: active\npriority: 3\ndue: 2020-01-01\ntags: [x, y]\n---\nplan\n"),
            ("Later.md", "---\nStatus: active\npriority: 1\ndue: 2999-06-01\n---\n"),
            ("Done.md", "---\nstatus: done\ntitle: Shadowed\n---\n"),
            ("Plain.md", "no front matter\n"),
        ]
        for (path, text) in notes {
            #expect(try notesfs(["note", "new", path], db: db, stdin: Data(text.utf8)).status == 0)
        }
    }

    /// The paths `notesfs query ARGS` prints, in its order.
    static func paths(_ arguments: [String], db: String) throws -> [String] {
        let result = try notesfs(["query"] + arguments, db: db)
        #expect(result.status == 0, "\(result.stderr)")
        return result.out.split(separator: "\n").map { String($0.split(separator: "\t").last ?? "") }
    }

    @Test func predicatesAndSortsOverProperties() throws {
        let db = makeDatabasePath("props-query")
        try Self.seed(db)
        #expect(try Self.paths([#"status == "active" AND due < now"#], db: db) == ["Work/Plan.md"])
        #expect(try Self.paths(["priority >= 2"], db: db) == ["Work/Plan.md"])
        #expect(try Self.paths([#""x" IN tags"#], db: db) == ["Work/Plan.md"])
        #expect(try Self.paths([#"tags CONTAINS "y""#], db: db) == ["Work/Plan.md"])
        #expect(try Self.paths([#"due > CAST("2026-12-01", "NSDate")"#], db: db) == ["Later.md"])
        #expect(try Self.paths(["TRUEPREDICATE", "--sort", "due,title"], db: db) == ["Work/Plan.md", "Later.md", "Done.md", "Plain.md"])
        #expect(
            try Self.paths(["TRUEPREDICATE", "--sort", "-priority,title"], db: db) == ["Work/Plan.md", "Later.md", "Done.md", "Plain.md"])
        #expect(try Self.paths(["status != NIL", "--sort", "-priority", "--limit", "2"], db: db) == ["Work/Plan.md", "Later.md"])
        // The record's own field wins over a property of the same name.
        #expect(try Self.paths([#"title == "Shadowed""#], db: db) == [])
        // A syntax error is a usage error with a caret.
        let refused = try notesfs(["query", "status =="], db: db)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("^"))
    }
}

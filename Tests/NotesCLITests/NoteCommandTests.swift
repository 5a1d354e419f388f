import Foundation
import TestSupport
import Testing

@Suite struct NoteCommandTests {
    @Test func newCatRemove() throws {
        let db = makeDatabasePath("note")
        try notesfs(["folder", "new", "Work"], db: db)
        #expect(try notesfs(["note", "new", "Work/Plan", "--text", "line 1\nline 2"], db: db).status == 0)
        let bytes = Data([0xEF, 0xBB, 0xBF]) + Data("BOM, CRLF\r\n, NUL \u{0} and é e\u{301} 🧪".utf8)
        #expect(try notesfs(["note", "new", "Work/Bytes.md"], db: db, stdin: bytes).status == 0)
        #expect(try notesfs(["note", "new", "Work/a/b slash", "--text", "x"], db: db).status == 1)
        #expect(try notesfs(["note", "new", "Work/a\u{2215}b slash", "--text", "slash"], db: db).status == 0)

        #expect(try notesfs(["note", "cat", "Work/Plan"], db: db).out == "line 1\nline 2")
        #expect(try notesfs(["note", "cat", "Work/Plan.md"], db: db).out == "line 1\nline 2")
        #expect(try notesfs(["note", "cat", "Work/Bytes"], db: db).stdout == bytes)
        #expect(try notesfs(["ls", "Work"], db: db).out == "Bytes.md\nPlan.md\na\u{2215}b slash.md\n")
        let title = try notesfs(["query", "title == 'a/b slash'"], db: db)
        #expect(title.lines.count == 1)

        // By record name.
        let listing = try parseJSON(try notesfs(["ls", "--json", "Work/Plan"], db: db).stdout) as? [[String: Any]]
        let recordName = try #require(listing?.first?["recordName"] as? String)
        #expect(try notesfs(["note", "cat", recordName], db: db).out == "line 1\nline 2")

        // Bytes that are not UTF-8 are kept as they are (as the mount keeps them).
        let binary = try notesfs(["note", "new", "Bad"], db: db, stdin: Data([0x66, 0xFF, 0xFE]))
        #expect(binary.status == 0, "\(binary.stderr)")
        #expect(try notesfs(["note", "cat", "Bad"], db: db).stdout == Data([0x66, 0xFF, 0xFE]))

        let exists = try notesfs(["note", "new", "Work/Plan", "--text", "again"], db: db)
        #expect(exists.status == 3)
        #expect(exists.stderr == "notesfs: Work/Plan.md: already exists (use --force to replace its text)\n")
        #expect(try notesfs(["note", "new", "Work/Plan", "--text", "replaced", "--force"], db: db).status == 0)
        #expect(try notesfs(["note", "cat", recordName], db: db).out == "replaced")

        let missing = try notesfs(["note", "cat", "Work/Nope"], db: db)
        #expect(missing.status == 1)
        #expect(missing.stderr == "notesfs: Work/Nope: no such folder, note or attachment\n")
        #expect(try notesfs(["note", "cat", "Work"], db: db).status == 1)

        #expect(try notesfs(["note", "rm", "Work/Plan"], db: db).status == 0)
        #expect(try notesfs(["note", "cat", recordName], db: db).status == 1)
        #expect(try notesfs(["note", "rm", "Work"], db: db).status == 2)
    }

    @Test func moveKeepsIdentity() throws {
        let db = makeDatabasePath("move")
        try notesfs(["folder", "new", "A"], db: db)
        try notesfs(["folder", "new", "B"], db: db)
        try notesfs(["note", "new", "A/Plan", "--text", "p"], db: db)
        try notesfs(["note", "new", "B/Other", "--text", "o"], db: db)
        let before = try parseJSON(try notesfs(["ls", "--json", "A/Plan"], db: db).stdout) as? [[String: Any]]
        let name = try #require(before?.first?["recordName"] as? String)

        #expect(try notesfs(["note", "mv", "A/Plan", "B"], db: db).status == 0)
        #expect(try notesfs(["ls", "B"], db: db).out == "Other.md\nPlan.md\n")
        #expect(try notesfs(["note", "mv", "B/Plan.md", "B/Renamed"], db: db).status == 0)
        #expect(try notesfs(["note", "mv", "B/Renamed", "/"], db: db).status == 0)
        let after = try parseJSON(try notesfs(["ls", "--json", "Renamed"], db: db).stdout) as? [[String: Any]]
        #expect(after?.first?["recordName"] as? String == name)
        #expect(after?.first?["creationDate"] as? String == before?.first?["creationDate"] as? String)
        #expect(after?.first?["modificationDate"] as? String == before?.first?["modificationDate"] as? String)

        let clash = try notesfs(["note", "mv", "Renamed", "B/Other"], db: db)
        #expect(clash.status == 3)
        #expect(clash.stderr == "notesfs: B/Other.md: already exists\n")
        #expect(try notesfs(["note", "mv", "Renamed", "C/X"], db: db).status == 1)
    }

    @Test func editSavesTheEditorsText() throws {
        let db = makeDatabasePath("edit")
        try notesfs(["note", "new", "Plan", "--text", "old text\n"], db: db)
        let dir = makeTemporaryDirectory("editor")
        let script = dir + "/editor.sh"
        try Data("#!/bin/sh\nsed -i 's/old/new/' \"$1\"\n".utf8).write(to: URL(fileURLWithPath: script))
        chmod(script, 0o755)
        let result = try notesfs(["note", "edit", "Plan"], db: db, environment: ["VISUAL": "", "EDITOR": "/bin/sh " + script])
        #expect(result.status == 0)
        #expect(try notesfs(["note", "cat", "Plan"], db: db).out == "new text\n")
        // An editor that fails leaves the note alone.
        let failing = try notesfs(["note", "edit", "Plan"], db: db, environment: ["VISUAL": "false"])
        #expect(failing.status == 5)
        #expect(try notesfs(["note", "cat", "Plan"], db: db).out == "new text\n")
    }

    @Test func editConflictKeepsBothTexts() throws {
        let db = makeDatabasePath("conflict")
        try notesfs(["note", "new", "Plan", "--text", "original"], db: db)
        let dir = makeTemporaryDirectory("editor")
        let script = dir + "/editor.sh"
        // While "editing", another process changes the same note; then the editor writes its file.
        let body = """
            #!/bin/sh
            "\(notesfsBinary)" --db "\(db)" note new Plan --force --text "changed elsewhere" || exit 9
            printf 'edited text' > "$1"

            """
        try Data(body.utf8).write(to: URL(fileURLWithPath: script))
        chmod(script, 0o755)
        let result = try notesfs(["note", "edit", "Plan"], db: db, environment: ["VISUAL": "/bin/sh " + script])
        #expect(result.status == 3)
        #expect(result.stderr.hasPrefix("notesfs: Plan.md: changed by someone else while you edited it; your text is kept in "))
        let kept = String(result.stderr.split(separator: " ").last ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try String(contentsOfFile: kept, encoding: .utf8) == "edited text")
        #expect(try notesfs(["note", "cat", "Plan"], db: db).out == "changed elsewhere")
    }
}

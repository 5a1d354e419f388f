import Foundation
import TestSupport
import Testing

@Suite struct FolderCommandTests {
    @Test func newListAndRemove() throws {
        let db = makeDatabasePath("folder")
        #expect(try notesfs(["folder", "new", "Work"], db: db).status == 0)
        #expect(try notesfs(["folder", "new", "Projects", "--parent", "Work"], db: db).status == 0)
        #expect(try notesfs(["folder", "new", "Work/Archive"], db: db).status == 0)
        #expect(try notesfs(["folder", "new", "Home"], db: db).status == 0)
        #expect(try notesfs(["note", "new", "Work/Projects/Plan", "--text", "p"], db: db).status == 0)
        #expect(try notesfs(["note", "new", "Work/Todo", "--text", "t"], db: db).status == 0)

        #expect(try notesfs(["folder", "ls"], db: db).out == "Home/\nWork/\n")
        #expect(try notesfs(["folder", "ls", "Work"], db: db).out == "Work/Archive/\nWork/Projects/\n")
        let json = try parseJSON(try notesfs(["folder", "ls", "--json", "Work"], db: db).stdout) as? [[String: Any]]
        #expect(json?.map { $0["path"] as? String } == ["Work/Archive", "Work/Projects"])
        #expect(json?.allSatisfy { $0["type"] as? String == "folder" } == true)

        let exists = try notesfs(["folder", "new", "Work"], db: db)
        #expect(exists.status == 3)
        #expect(exists.stderr == "notesfs: Work/: already exists\n")
        let missingParent = try notesfs(["folder", "new", "X", "--parent", "Nope"], db: db)
        #expect(missingParent.status == 1)
        #expect(missingParent.stderr == "notesfs: Nope: no such folder, note or attachment\n")

        let dryRun = try notesfs(["folder", "rm", "Work", "--dry-run"], db: db)
        #expect(dryRun.status == 0)
        let expected = ["Work/", "Work/Archive/", "Work/Projects/", "Work/Projects/Plan.md", "Work/Todo.md"]
        #expect(dryRun.lines == expected)
        #expect(dryRun.stderr == "notesfs: would remove 3 folders, 2 notes, 0 attachments\n")
        #expect(try notesfs(["ls", "Work"], db: db).out == "Archive/\nProjects/\nTodo.md\n")

        let before = try parseJSON(try notesfs(["changes", "--json"], db: db).stdout) as? [String: Any]
        let token = try #require(before?["token"] as? String)
        let removed = try notesfs(["folder", "rm", "Work"], db: db)
        #expect(removed.status == 0)
        #expect(removed.lines == expected)
        #expect(try notesfs(["ls"], db: db).out == "Home/\n")
        #expect(try notesfs(["note", "cat", "Work/Todo"], db: db).status == 1)
        // The notes went with the folders (one modify: the token moved by one).
        let changes = try notesfs(["changes", "--json", "--since", token], db: db)
        let object = try parseJSON(changes.stdout) as? [String: Any]
        // Saved in that modify: only the last version of each deleted note (note history).
        #expect((object?["changed"] as? [[String: Any]])?.map { $0["recordType"] as? String } == ["Version", "Version"])
        #expect((object?["deleted"] as? [Any])?.count == 5)
        let next = try #require(object?["token"] as? String)
        #expect(next.split(separator: ":").last.flatMap { Int($0) } == token.split(separator: ":").last.flatMap { Int($0) }.map { $0 + 1 })

        let notFolder = try notesfs(["folder", "rm", "Home/Nothing"], db: db)
        #expect(notFolder.status == 1)
        #expect(try notesfs(["folder", "rm", "/"], db: db).status == 2)
    }

    @Test func removeJSONListsTheRecords() throws {
        let db = makeDatabasePath("folderjson")
        try notesfs(["folder", "new", "A"], db: db)
        try notesfs(["note", "new", "A/n", "--text", "x"], db: db)
        let result = try notesfs(["--json", "folder", "rm", "A"], db: db)
        let object = try parseJSON(result.stdout) as? [String: Any]
        #expect(object?["dryRun"] as? Bool == false)
        #expect((object?["removed"] as? [[String: Any]])?.map { $0["path"] as? String } == ["A", "A/n.md"])
    }
}

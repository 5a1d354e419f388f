import Foundation
import TestSupport
import Testing

/// `notesfs tag rename` through the binary: every note in one commit, `--dry-run`, refused names,
/// and a failed commit (a full disk) that changes nothing.
@Suite struct TagCommandTests {
    static func seed(_ db: String) throws {
        #expect(try notesfs(["folder", "new", "Work"], db: db).status == 0)
        #expect(try notesfs(["note", "new", "Work/Plan.md"], db: db, stdin: Data("# Goals\n#project/alpha #Project\n".utf8)).status == 0)
        #expect(
            try notesfs(["note", "new", "Index.md"], db: db, stdin: Data("---\ntags: [project]\n---\n`#project` #projects\n".utf8)).status
                == 0)
    }

    @Test func renameRewritesEveryNoteAndPrintsWhatChanged() throws {
        let db = makeDatabasePath("tag-rename")
        try Self.seed(db)
        let dryRun = try notesfs(["tag", "rename", "project", "work", "--dry-run"], db: db)
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        #expect(
            dryRun.out
                == "Index.md:2: #project -> #work\nWork/Plan.md:2: #project/alpha -> #work/alpha\nWork/Plan.md:2: #Project -> #work\n"
                + "would rename #project to #work: 3 tags in 2 notes\n")
        #expect(try notesfs(["note", "cat", "Work/Plan.md"], db: db).out == "# Goals\n#project/alpha #Project\n")

        let renamed = try notesfs(["tag", "rename", "#project", "#work"], db: db)
        #expect(renamed.status == 0, "\(renamed.stderr)")
        #expect(renamed.out == "Index.md: 1\nWork/Plan.md: 2\nrenamed #project to #work: 3 tags in 2 notes\n")
        #expect(try notesfs(["note", "cat", "Work/Plan.md"], db: db).out == "# Goals\n#work/alpha #work\n")
        #expect(try notesfs(["note", "cat", "Index.md"], db: db).out == "---\ntags: [work]\n---\n`#project` #projects\n")
        #expect(try notesfs(["tags"], db: db).out == "#projects  1\n#work  2\n#work/alpha  1\n")
        // Nothing has the old tag any more.
        let again = try notesfs(["tag", "rename", "project", "work"], db: db)
        #expect(again.status == 1)
        #expect(again.stderr.contains("no note has this tag"), "\(again.stderr)")
    }

    @Test func invalidNamesAreRefusedAndChangeNothing() throws {
        let db = makeDatabasePath("tag-rename-invalid")
        try Self.seed(db)
        for (name, reason) in [
            ("a b", "holds a space"), ("a#b", "holds #"), ("2024", "only digits"), ("", "empty"),
            (String(repeating: "x", count: 10_000), "longer than 512 bytes"),
        ] {
            let result = try notesfs(["tag", "rename", "project", name], db: db)
            #expect(result.status == 2, "\(name.prefix(20))")
            #expect(result.stderr.contains(reason), "\(result.stderr.prefix(200))")
        }
        #expect(try notesfs(["note", "cat", "Work/Plan.md"], db: db).out == "# Goals\n#project/alpha #Project\n")
    }

    @Test func jsonSaysWhatChanged() throws {
        let db = makeDatabasePath("tag-rename-json")
        try Self.seed(db)
        let result = try notesfs(["tag", "rename", "project/alpha", "beta", "--json"], db: db)
        let json = try #require(try parseJSON(result.stdout) as? [String: Any])
        #expect(json["tags"] as? Int == 1)
        #expect((json["notes"] as? [[String: Any]])?.map { $0["path"] as? String } == ["Work/Plan.md"])
        #expect(try notesfs(["note", "cat", "Work/Plan.md"], db: db).out == "# Goals\n#beta #Project\n")
    }

    @Test(.tags(.mount), .needsFUSE) func aCommitThatFindsTheDiskFullChangesNothing() throws {
        let point = makeTemporaryDirectory("tag-full")
        let mounted = try run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=4M", "tmpfs", point])
        guard mounted.status == 0 else {
            Issue.record("mount failed (root is needed): \(mounted.stderr)")
            return
        }
        defer { _ = try? run("/usr/bin/umount", ["-l", point]) }
        let db = point + "/db"
        let text = String(repeating: "#project ", count: 40_000) + "\n"  // 360 KB: more than the space kept for deletes
        #expect(try notesfs(["note", "new", "Big.md"], db: db, stdin: Data(text.utf8)).status == 0)
        #expect(try notesfs(["tags"], db: db).out == "#project  1\n")  // the index is built
        let fill = try run("/bin/dd", ["if=/dev/zero", "of=\(point)/fill", "bs=64k"])
        #expect(fill.status != 0 && fill.stderr.contains("No space left"))
        // Room for reading the index, not for the commit.
        #expect(try run("/usr/bin/truncate", ["-s", "-300K", point + "/fill"]).status == 0)
        let renamed = try notesfs(["tag", "rename", "project", "work"], db: db)
        #expect(renamed.status == 5)
        #expect(renamed.stderr.contains("No space left on device") && renamed.stderr.contains("no note was changed"), "\(renamed.stderr)")
        try FileManager.default.removeItem(atPath: point + "/fill")
        #expect(try notesfs(["note", "cat", "Big.md"], db: db).out == text)
        let fsck = try notesfs(["fsck"], db: db)
        #expect(fsck.status == 0, "\(fsck.out)\(fsck.stderr)")
    }
}

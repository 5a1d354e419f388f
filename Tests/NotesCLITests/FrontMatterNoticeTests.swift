import Foundation
import TestSupport
import Testing

/// `notesfs fsck` lists the notes whose front matter it cannot read as notices, through the binary.
@Suite struct FrontMatterNoticeTests {
    @Test func fsckListsUnreadableFrontMatterAsANotice() throws {
        let db = makeDatabasePath("props-fsck")
        try PropertyQueryCommandTests.seed(db)
        let broken = "---\nstatus: active\nbad: [a\n---\nkept as written\n"
        #expect(try notesfs(["note", "new", "Work/Broken.md"], db: db, stdin: Data(broken.utf8)).status == 0)
        #expect(try notesfs(["note", "cat", "Work/Broken.md"], db: db).out == broken)
        let result = try notesfs(["fsck"], db: db)
        #expect(result.status == 0)
        #expect(result.out.hasPrefix("notice: Work/Broken.md: front matter not read: line 3: "))
        #expect(result.out.split(separator: "\n").count == 1)
        #expect(result.stderr.contains("0 problems found, 1 notice"))
        let json = try #require(try parseJSON(try notesfs(["fsck", "--json"], db: db).stdout) as? [String: Any])
        #expect((json["notices"] as? [String])?.count == 1)
        // Its properties that were read still count.
        #expect(try PropertyQueryCommandTests.paths([#"status == "active""#], db: db).contains("Work/Broken.md"))
    }
}

extension FrontMatterNoticeTests {
    /// A block that closes past the 1 MiB read as properties is no front matter: a notice says so.
    @Test func fsckNamesFrontMatterTooBigToRead() throws {
        let db = makeDatabasePath("props-fsck-big")
        let text = "---\nstatus: active\n" + String(repeating: "k: \(String(repeating: "v", count: 1000))\n", count: 1100) + "---\nbody\n"
        #expect(try notesfs(["note", "new", "Big.md"], db: db, stdin: Data(text.utf8)).status == 0)
        // A long note that only starts with a rule is no front matter.
        let rule = "---\n" + String(repeating: "text\n", count: 300_000)
        #expect(try notesfs(["note", "new", "Rule.md"], db: db, stdin: Data(rule.utf8)).status == 0)
        let result = try notesfs(["fsck"], db: db)
        #expect(result.status == 0)
        let size = text.utf8.count - "body\n".utf8.count
        #expect(result.out == "notice: Big.md: front matter not read: a block of \(size) bytes, over the 1048576 read as properties\n")
    }
}

import Foundation
import TestSupport
import Testing

/// `notesfs links`, `links --broken`, `backlinks` and `tags` through the binary, and `note mv`
/// keeping links right.
@Suite struct LinksCommandTests {
    static func seed(_ db: String) throws {
        #expect(try notesfs(["folder", "new", "Work"], db: db).status == 0)
        #expect(try notesfs(["note", "new", "Work/Plan.md"], db: db, stdin: Data("# Goals\n#project/alpha\n".utf8)).status == 0)
        #expect(
            try notesfs(
                ["note", "new", "Index.md"], db: db,
                stdin: Data("see [[Plan]]\nand [x](Work/Plan.md)\n[[Nowhere]] is broken\n`[[Plan]]` is code #Project\n".utf8)
            ).status == 0)
    }

    @Test func linksBacklinksBrokenAndTags() throws {
        let db = makeDatabasePath("links")
        try Self.seed(db)
        let links = try notesfs(["links", "Index.md"], db: db)
        #expect(links.status == 0)
        #expect(links.out == "1: Plan -> Work/Plan.md\n2: Work/Plan.md -> Work/Plan.md\n3: Nowhere -> broken\n")
        let backlinks = try notesfs(["backlinks", "Work/Plan"], db: db)
        #expect(backlinks.out == "Index.md:1: see [[Plan]]\nIndex.md:2: and [x](Work/Plan.md)\n")
        let json = try #require(try parseJSON(try notesfs(["backlinks", "Work/Plan.md", "--json"], db: db).stdout) as? [[String: Any]])
        #expect(json.map { $0["line"] as? Int } == [1, 2])
        #expect(try notesfs(["links", "--broken"], db: db).out == "Index.md:3: Nowhere\n")
        #expect(try notesfs(["backlinks", "Index.md"], db: db).status == 1)
        #expect(try notesfs(["links", "Nope.md"], db: db).status == 1)
        // Counted by the tag itself; its spelling the most common, then the first in byte order.
        #expect(try notesfs(["tags"], db: db).out == "#Project  1\n#project/alpha  1\n")
        #expect(try notesfs(["tags", "project"], db: db).out == "Index.md\nWork/Plan.md\n")
        // search --tag: the hits tagged so (or nested under it).
        let goals = try notesfs(["search", "goals OR code", "--tag", "project/alpha"], db: db)
        #expect(goals.status == 0)
        #expect(goals.out.hasPrefix("Work/Plan.md  ") && !goals.out.contains("Index.md"), "\(goals.out)")
        #expect(try notesfs(["search", "code", "--tag", "#project"], db: db).out.hasPrefix("Index.md  "))
        #expect(try notesfs(["search", "code", "--tag", "nothing"], db: db).status == 1)
    }

    @Test func noteMoveRewritesLinksUnlessTold() throws {
        let db = makeDatabasePath("links-mv")
        try Self.seed(db)
        #expect(try notesfs(["note", "mv", "Work/Plan.md", "Work/Roadmap.md"], db: db).status == 0)
        #expect(
            try notesfs(["note", "cat", "Index.md"], db: db).out
                == "see [[Roadmap]]\nand [x](Work/Roadmap.md)\n[[Nowhere]] is broken\n`[[Plan]]` is code #Project\n")
        #expect(try notesfs(["note", "mv", "--no-links", "Work/Roadmap.md", "Roadmap.md"], db: db).status == 0)
        #expect(try notesfs(["links", "--broken"], db: db).out == "Index.md:2: Work/Roadmap.md\nIndex.md:3: Nowhere\n")
    }
}

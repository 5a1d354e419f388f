/// Renames through the mount keep links right: `mv` of a note, an attachment or a folder rewrites
/// every link that resolved to what moved, in the rename's commit, keeping each link's form; a
/// moved note's own relative links follow it; `-o nolinks` rewrites nothing; `.backlinks/PATH`
/// and `.tags/` answer from the index at once.

import FUSE
import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import NotesFS

@Suite struct LinkRewriteMountTests {
    /// `mv A B` in the mount, which must succeed.
    func move(_ m: NotesMount, _ from: String, _ to: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try sh("mv \(shellQuoted(m.path(from))) \(shellQuoted(m.path(to)))")
        #expect(result.status == 0, "\(result.out)", sourceLocation: sourceLocation)
    }

    /// A small vault: `Work/Plan.md` linked every way, from the root and from beside it.
    static func seedVault(_ db: RecordDatabase) throws {
        let work = try db.modify(saving: [Folder(name: "Work").record]).savedRecords[0]
        _ = try db.modify(saving: [Folder(name: "Archive").record])
        _ = try db.modify(saving: [
            Note(title: "Plan", text: "# Goals\nsee [index](../Index.md) and [[Index]]\n", folder: work.recordID).record,
            Note(
                title: "Index",
                text: """
                    [[Plan]], [[Plan|the plan]], [[Plan#Goals]], ![[Plan]]
                    [x](Work/Plan.md) and [y](<Work/Plan.md>)
                    `[[Plan]]` is code, so is
                    ```
                    [[Plan]]
                    ```
                    #project/alpha

                    """
            ).record,
            Note(title: "Sibling", text: "[p](Plan.md) and [q](./Plan.md#Goals)\n", folder: work.recordID).record,
        ])
    }

    @Test(.tags(.mount), .needsFUSE) func renamingANoteRewritesEveryLinkToItInItsOwnForm() throws {
        try withNotesMount(seed: Self.seedVault) { m in
            try move(m, "Work/Plan.md", "Work/Roadmap.md")
            #expect(
                readFile(m.path("Index.md")) == """
                    [[Roadmap]], [[Roadmap|the plan]], [[Roadmap#Goals]], ![[Roadmap]]
                    [x](Work/Roadmap.md) and [y](<Work/Roadmap.md>)
                    `[[Plan]]` is code, so is
                    ```
                    [[Plan]]
                    ```
                    #project/alpha

                    """)
            #expect(readFile(m.path("Work/Sibling.md")) == "[p](Roadmap.md) and [q](./Roadmap.md#Goals)\n")
            // The renamed note's own links did not need to change (same folder).
            #expect(readFile(m.path("Work/Roadmap.md")) == "# Goals\nsee [index](../Index.md) and [[Index]]\n")
            #expect(listing(m.path(".backlinks/Work/Roadmap.md")) == ["Index.md", "Sibling.md"])
            #expect(listing(m.path(".backlinks/Work/Plan.md")) == [])
        }
    }

    @Test(.tags(.mount), .needsFUSE) func movingANoteKeepsLinksToItAndItsOwnRelativeLinks() throws {
        try withNotesMount(seed: Self.seedVault) { m in
            try move(m, "Work/Plan.md", "Archive/")
            let index = try #require(readFile(m.path("Index.md")))
            // A bare name that is still unique needs no change; paths do.
            #expect(
                index.hasPrefix("[[Plan]], [[Plan|the plan]], [[Plan#Goals]], ![[Plan]]\n[x](Archive/Plan.md) and [y](<Archive/Plan.md>)\n")
            )
            #expect(readFile(m.path("Work/Sibling.md")) == "[p](../Archive/Plan.md) and [q](../Archive/Plan.md#Goals)\n")
            #expect(readFile(m.path("Archive/Plan.md")) == "# Goals\nsee [index](../Index.md) and [[Index]]\n")
            // Up to the root: its relative link to the index stays relative, one level shorter.
            try move(m, "Archive/Plan.md", "Plan.md")
            #expect(readFile(m.path("Plan.md")) == "# Goals\nsee [index](./Index.md) and [[Index]]\n")
            #expect(readFile(m.path("Work/Sibling.md")) == "[p](../Plan.md) and [q](../Plan.md#Goals)\n")
        }
    }

    @Test(.tags(.mount), .needsFUSE) func renamingAFolderRewritesTheLinksIntoIt() throws {
        try withNotesMount(seed: Self.seedVault) { m in
            try move(m, "Work", "Projects")
            let index = try #require(readFile(m.path("Index.md")))
            #expect(index.contains("[x](Projects/Plan.md) and [y](<Projects/Plan.md>)\n"))
            #expect(index.hasPrefix("[[Plan]], "))
            // Links between the moved notes are relative to each other: unchanged.
            #expect(readFile(m.path("Projects/Sibling.md")) == "[p](Plan.md) and [q](./Plan.md#Goals)\n")
            #expect(listing(m.path(".backlinks/Projects/Plan.md")) == ["Index.md", "Sibling.md"])
        }
    }

    @Test(.tags(.mount), .needsFUSE) func noLinksLeavesEveryNoteAsItWas() throws {
        try withNotesMount(options: NotesFileSystem.Options(noLinkRewriting: true), seed: Self.seedVault) { m in
            let before = readFile(m.path("Index.md"))
            try move(m, "Work/Plan.md", "Work/Roadmap.md")
            #expect(readFile(m.path("Index.md")) == before)
            #expect(readFile(m.path("Work/Sibling.md")) == "[p](Plan.md) and [q](./Plan.md#Goals)\n")
        }
    }

    @Test(.tags(.mount), .needsFUSE) func tagsShowAsDirectories() throws {
        try withNotesMount(seed: Self.seedVault) { m in
            #expect(listing(m.path(".tags")) == ["project"])
            #expect(listing(m.path(".tags/project")) == ["alpha"])
            #expect(listing(m.path(".tags/project/alpha")) == ["Index.md"])
            #expect(readFile(m.path(".tags/project/alpha/Index.md"))?.hasPrefix("[[Plan]]") == true)
            // Written and listed at once.
            #expect(writeFile(m.path("Work/New.md"), "a #Project note\n") == 0)
            #expect(listing(m.path(".tags/project")) == ["New.md", "alpha"])
        }
    }
}

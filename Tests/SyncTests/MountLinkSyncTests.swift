import Foundation
import TestSupport
import Testing

/// A rename that rewrites links in one mount arrives in another as it was made there: the renamed
/// note and the rewritten notes, which the receiving mount shows and indexes (backlinks, no broken
/// link) and does not rewrite again (no commit of its own follows).
@Suite(.tags(.mount, .postgres), .needsFUSE, .needsPostgres) struct MountLinkSyncTests {
    @Test func aRenameThatRewroteLinksArrivesRewrittenAndIsNotRewrittenAgain() throws {
        try withSyncedMounts(2) { mounts, machines in
            let (a, b) = (mounts[0], mounts[1])
            try a.run("mkdir Work && printf 'the plan\\n' > Work/Plan.md && printf 'see [[Plan]] and [p](Work/Plan.md)\\n' > Index.md")
            expectEverywhere([b], "the vault") { $0.read("Index.md") != nil && $0.read("Work/Plan.md") != nil }
            try a.run("mv Work/Plan.md Work/Roadmap.md")
            #expect(a.read("Index.md") == "see [[Roadmap]] and [p](Work/Roadmap.md)\n")
            let arrived = expectEverywhere([b], "the rename and the rewritten note", within: 30) {
                $0.read("Index.md") == "see [[Roadmap]] and [p](Work/Roadmap.md)\n" && $0.exists("Work/Roadmap.md")
            }
            guard arrived else { return }
            let tag = b.xattr("Index.md", "user.notesfs.changeTag")
            #expect(tag != nil)
            // The receiving mount knows the links at once and commits nothing of its own about them.
            #expect(try b.shell("ls .backlinks/Work/Roadmap.md").out == "Index.md\n")
            let broken = try notesfs(["links", "--broken"], db: machines[1].path)
            #expect(broken.status == 1 && broken.out.isEmpty, "\(broken.out)")
            usleep(1_500_000)  // long enough for a background rewrite to have committed, were there one
            #expect(b.xattr("Index.md", "user.notesfs.changeTag") == tag)
            #expect(a.read("Index.md") == "see [[Roadmap]] and [p](Work/Roadmap.md)\n")
        }
    }
}

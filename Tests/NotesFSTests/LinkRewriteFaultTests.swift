/// Renames that rewrite links under hostile or awkward conditions: a note open with unsaved writes
/// (never overwritten: the conflict copy keeps them), a note of 100,000 links, a link to itself,
/// titles that differ only by case or Unicode normalisation, titles a wiki link cannot carry.

import FUSE
import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import NotesFS

@Suite struct LinkRewriteFaultTests {
    func move(_ m: NotesMount, _ from: String, _ to: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try sh("mv \(shellQuoted(m.path(from))) \(shellQuoted(m.path(to)))")
        #expect(result.status == 0, "\(result.out)", sourceLocation: sourceLocation)
    }

    /// An editor's unsaved writes to a note a rename rewrites: the rename's commit goes to the
    /// store, the buffer is not touched, and its save meets the newer record: the writer gets
    /// `ESTALE` and its bytes are kept as a conflict copy (the writer: ``UnsavedWrites``).
    @Test(.tags(.mount), .needsFUSE) func aNoteWithUnsavedWritesIsNeverOverwritten() throws {
        try withNotesMount(seed: { db in
            _ = try db.modify(saving: [
                Note(title: "Plan", text: "the plan\n").record, Note(title: "Index", text: "see [[Plan]]\n").record,
            ])
        }) { m in
            let mine = "mine: [[Plan]] and more\n"
            let writer = try UnsavedWrites(m, "Index.md", writing: mine)
            try move(m, "Plan.md", "Roadmap.md")
            // The store has the rewritten note; the open buffer was not touched.
            let stored = try m.database.queryMetadata(Query(recordType: Note.recordType, predicate: Predicate(format: "title == 'Index'")))
            #expect(stored.count == 1)
            #expect(try m.database.record(for: stored[0].recordID)[FieldName.text]?.stringValue == "see [[Roadmap]]\n")
            try writer.saveMeetingANewerRecord()
            // The writer's bytes are kept as a conflict copy; the note shows the rewritten link.
            let copy = "Index (conflict \(ConflictName.day(Date())) \(ConflictName.hostName())).md"
            #expect(eventually(5) { listing(m.root)?.contains(copy) == true }, "\(listing(m.root) ?? [])")
            #expect(readFile(m.path(copy)) == mine)
            #expect(readFile(m.path("Index.md")) == "see [[Roadmap]]\n")
        }
    }

    @Test(.tags(.mount), .needsFUSE) func aNoteOfAHundredThousandLinksIsRewrittenWhole() throws {
        let count = 100_000
        let text = String(repeating: "[[Plan]] ", count: count) + "\n"
        try withNotesMount(seed: { db in
            _ = try db.modify(saving: [Note(title: "Plan", text: "x\n").record, Note(title: "Many", text: text).record])
        }) { m in
            try move(m, "Plan.md", "Roadmap.md")
            let after = try #require(readFile(m.path("Many.md")))
            #expect(after == String(repeating: "[[Roadmap]] ", count: count) + "\n")
        }
    }

    @Test(.tags(.mount), .needsFUSE) func linksToItselfCaseAndNormalisation() throws {
        let composed = "Caf\u{E9}"
        let decomposed = "Cafe\u{301}"
        try withNotesMount(seed: { db in
            _ = try db.modify(saving: [
                Note(title: "Self", text: "[[Self]] and [[#Top]] and [me](Self.md)\n").record,
                Note(title: composed, text: "coffee\n").record,
                Note(title: "Index", text: "[[\(decomposed)]] [[CAFÉ]] [[self]]\n").record,
            ])
        }) { m in
            try move(m, "Self.md", "Me.md")
            #expect(readFile(m.path("Me.md")) == "[[Me]] and [[#Top]] and [me](Me.md)\n")
            try move(m, "\(composed).md", "Tea.md")
            #expect(readFile(m.path("Index.md")) == "[[Tea]] [[Tea]] [[Me]]\n")
        }
    }

    @Test(.tags(.mount), .needsFUSE) func titlesAWikiLinkCannotCarryKeepMarkdownLinksRight() throws {
        try withNotesMount(seed: { db in
            _ = try db.modify(saving: [
                Note(title: "Plan", text: "x\n").record,
                Note(title: "Index", text: "[a](Plan.md) [[Plan]]\n").record,
            ])
        }) { m in
            try move(m, "Plan.md", "A|B #1 ]].md")
            let index = try #require(readFile(m.path("Index.md")))
            // The markdown link follows (escaped); the wiki link cannot name such a file and stays.
            #expect(index == "[a](A|B%20%231%20]].md) [[Plan]]\n")
            let broken = try run([notesfsBinary, "--db", m.databasePath, "links", "--broken"])
            #expect(broken.out == "Index.md:1: Plan\n")
        }
    }
}

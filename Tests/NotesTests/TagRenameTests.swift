import Foundation
import Index
import Notes
import RecordStore
import TestSupport
import Testing

/// Renaming a tag: exactly the names of `#old`, `#old/…` and the front matter's entries change,
/// whatever their case; `#older`, code, headings and URLs stay; invalid new names are refused.
@Suite struct TagRenameTests {
    /// `text` with `old` renamed to `new` (unchanged when no tag changes).
    func renamed(_ text: String, _ old: String = "old", _ new: String = "new") throws -> String {
        try TagRename.rewrite(text, from: old, to: new)?.text ?? text
    }

    /// A longer name in every one of many tags: the new text is not built past what a note holds
    /// as text (300,000 tags renamed to a 40-byte name would be 12 MB), and the plan refuses it.
    @Test func aRewriteTooLargeToKeepIsNotBuiltWhole() throws {
        let text = String(repeating: "#a ", count: 300_000)
        let long = String(repeating: "b", count: 40)
        let result = try #require(try TagRename.rewrite(text, from: "a", to: long))
        #expect(result.text.utf8.count > Note.maxInlineTextBytes)
        #expect(result.text.utf8.count <= Note.maxInlineTextBytes + long.utf8.count + 3)
    }

    @Test func textTagsAndNestedOnesChangeOthersStay() throws {
        let text = "#old and #old/x and (#old/x/y), #older, #bold, a#old, \\#old, # old, #Old/X\n"
        #expect(try renamed(text) == "#new and #new/x and (#new/x/y), #older, #bold, a#old, \\#old, # old, #new/X\n")
        let changes = try #require(try TagRename.rewrite(text, from: "old", to: "new")).changes
        #expect(changes.map(\.old) == ["old", "old/x", "old/x/y", "Old/X"])
        #expect(changes.map(\.new) == ["new", "new/x", "new/x/y", "new/X"])
        #expect(try TagRename.rewrite("#older #bold\n", from: "old", to: "new") == nil)
    }

    @Test func caseOfOldIsIgnoredAndNewIsWrittenAsGiven() throws {
        #expect(try renamed("#PROJECT #Project/Alpha #project\n", "Project", "Work") == "#Work #Work/Alpha #Work\n")
        // A case-only rename changes only the spellings that differ.
        let result = try #require(try TagRename.rewrite("#project #Project\n", from: "project", to: "Project"))
        #expect(result.text == "#Project #Project\n")
        #expect(result.changes.count == 1)
    }

    @Test func nestedOldRenamesOnlyThatBranch() throws {
        let text = "#project/alpha #project/alpha/v1 #project/beta #project #project/alphabet\n"
        #expect(
            try renamed(text, "project/alpha", "project/gamma")
                == "#project/gamma #project/gamma/v1 #project/beta #project #project/alphabet\n")
        #expect(try renamed(text, "project/alpha", "done") == "#done #done/v1 #project/beta #project #project/alphabet\n")
    }

    @Test func codeCommentsHeadingsLinksAndURLsStay() throws {
        let text = """
            `#old` in a span, ``#old `x` `` too
            ```
            #old in a fence
            ```
            <!-- #old in a comment -->
            # old heading
            [[Note#old]] and [x](http://x/#old) but [#old text](y.md)
            #old

            """
        // Only the tag in a link's shown text and the last line's change.
        let expected = text.replacingOccurrences(of: "[#old text]", with: "[#new text]").replacingOccurrences(
            of: ")\n#old\n", with: ")\n#new\n")
        #expect(expected != text)
        #expect(try renamed(text) == expected)
    }

    @Test func frontMatterListsAndScalarsChange() throws {
        let flow = "---\ntags: [old, \"old/x\", 'Old', older, other]\ntitle: old\n---\n#old\n"
        #expect(try renamed(flow) == "---\ntags: [new, \"new/x\", 'new', older, other]\ntitle: old\n---\n#new\n")
        let block = "---\ntags:\n  - old\n  - \"#old/x\"\n  - older\n---\ntext\n"
        #expect(try renamed(block) == "---\ntags:\n  - new\n  - \"#new/x\"\n  - older\n---\ntext\n")
        let scalar = "---\ntag: old, #old/x older\naliases: [old]\n---\n"
        #expect(try renamed(scalar) == "---\ntag: new, #new/x older\naliases: [old]\n---\n")
        let crlf = "---\r\ntags: old\r\n---\r\n#old\r\n"
        #expect(try renamed(crlf) == "---\r\ntags: new\r\n---\r\n#new\r\n")
        let changes = try #require(try TagRename.rewrite(flow, from: "old", to: "new")).changes
        #expect(changes.map(\.line) == [2, 2, 2, 5])
    }

    @Test func invalidNewNamesAreRefusedWithAReason() throws {
        #expect(TagRename.problem(withName: "new") == nil)
        #expect(TagRename.problem(withName: "a/b-c_d") == nil)
        #expect(TagRename.problem(withName: "2024/12") == nil)
        #expect(TagRename.problem(withName: "été") == nil)
        #expect(TagRename.problem(withName: "") == "it is empty")
        #expect(TagRename.problem(withName: "a b") == "it holds a space")
        #expect(TagRename.problem(withName: "a#b") == "it holds #")
        #expect(TagRename.problem(withName: "2024") == "it is only digits")
        #expect(TagRename.problem(withName: "a/") == "it ends with /")
        #expect(TagRename.problem(withName: "a.b") == "it holds a character other than letters, digits, _, - and /")
        #expect(TagRename.problem(withName: String(repeating: "x", count: 512)) == nil)
        #expect(TagRename.problem(withName: String(repeating: "x", count: 10_000)) == "it is longer than 512 bytes (10000)")
    }

    @Test func aNestedTagThatWouldGrowTooLongRefusesTheRename() throws {
        let text = "#a/" + String(repeating: "x", count: 500) + "\n"
        #expect(throws: TagRenameError.self) { try TagRename.rewrite(text, from: "a", to: String(repeating: "y", count: 20)) }
    }

    @Test func aNoteWithAHundredThousandTagsIsRewrittenInOnePass() throws {
        let text = String(repeating: "#old #older #old/x\n", count: 33_334)  // 100,002 tags
        let clock = ContinuousClock()
        var result: (text: String, changes: [(line: Int, old: String, new: String)])?
        let elapsed = try clock.measure { result = try TagRename.rewrite(text, from: "old", to: "new") }
        let rewritten = try #require(result)
        #expect(rewritten.changes.count == 66_668)
        #expect(rewritten.text == String(repeating: "#new #older #new/x\n", count: 33_334))
        #expect(elapsed < .seconds(20), "\(elapsed)")
    }

    // MARK: Through the index and the store

    func makeDatabase() throws -> RecordDatabase {
        let path = makeTemporaryDirectory("notesfs-tagrename")
        return try RecordDatabase(path: path, backgroundThread: false)
    }

    @Test func thePlanReadsTheStoreAndReportsNotesStoredAsAssets() throws {
        let database = try makeDatabase()
        let work = try database.modify(saving: [Folder(name: "Work").record]).savedRecords[0]
        // The index reads a note's text field: one stored as an asset shows there only with a text.
        var asset = Note(title: "Big", text: "#old\n").record
        asset[FieldName.content] = .asset(try database.makeAsset(Data("#old in an asset\n".utf8)))
        try database.modify(saving: [
            Note(title: "A", text: "#old #older\n", folder: work.recordID).record,
            Note(title: "B", text: "---\ntags: [Old/x]\n---\nbody\n").record,
            Note(title: "C", text: "#older only\n").record,
            Note(title: "D", text: "---\ntags: [2024, old]\n---\n").record,
            asset,
        ])
        let index = NotesSearchIndex(database: database)
        let plan = try index.tagRename(from: "#old", to: "#new")
        #expect(plan.old == "old" && plan.new == "new")
        #expect(plan.notes.map(\.path).sorted() == ["B.md", "D.md", "Work/A.md"])
        #expect(plan.tagCount == 3)
        let texts = plan.notes.map { $0.record[FieldName.text]?.stringValue }
        #expect(Set(texts.compactMap { $0 }) == ["#new #older\n", "---\ntags: [new/x]\n---\nbody\n", "---\ntags: [2024, new]\n---\n"])
        #expect(plan.notRewritten.map(\.path) == ["Big.md"])
        // A front-matter tag that is only digits can be renamed from.
        let digits = try index.tagRename(from: "2024", to: "y2024")
        #expect(digits.notes.map { $0.record[FieldName.text]?.stringValue } == ["---\ntags: [y2024, old]\n---\n"])
        #expect(throws: TagRenameError.self) { try index.tagRename(from: "old", to: "new tag") }
        #expect(throws: TagRenameError.self) { try index.tagRename(from: "#", to: "new") }
        #expect(throws: TagRenameError.self) { try index.tagRename(from: "old", to: String(repeating: "x", count: 10_000)) }
    }

    @Test func aPlanSavedAfterOneOfItsNotesChangedCommitsNothing() throws {
        let database = try makeDatabase()
        let saved = try database.modify(saving: [Note(title: "A", text: "#old\n").record, Note(title: "B", text: "#old/x\n").record])
        let plan = try NotesSearchIndex(database: database).tagRename(from: "old", to: "new")
        #expect(plan.notes.count == 2)
        var changed = saved.savedRecords[1]
        changed[FieldName.text] = .string("#old/x changed elsewhere\n")
        try database.modify(saving: [changed])
        #expect(throws: RecordStoreError.self) { try database.modify(saving: plan.notes.map(\.record)) }
        let texts = try saved.savedRecords.map { try database.record(for: $0.recordID)[FieldName.text]?.stringValue }
        #expect(texts == ["#old\n", "#old/x changed elsewhere\n"])
    }
}

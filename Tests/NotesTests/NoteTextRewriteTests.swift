import Testing

@testable import Notes

/// The scanner and the rewriter agree: a destination `LinkRewriter.encoded` writes for a path, put
/// in place of a link's `targetRange`, is read back by `NoteText.scan` as that path, and the rest
/// of the link (heading, shown text) stays.
@Suite struct NoteTextRewriteTests {
    static let paths = [
        "Plan B.md", "Dir/Sub Note.md", "a(b).md", "a)b.md", "((deep)).md", "100%.md", "#hash.md", "caf\u{E9} \u{65E5}\u{672C}.md",
        "x<y>.md", "back\\slash.md", "q?.md", "../Up/One.md", "./Here.md", "/Root.md", "tab\there.md", "a&b=c;d.md", "[brackets].md",
    ]

    /// Links written as percent-escaped, with raw spaces inside `<…>`, and bare.
    static let notes = [
        "See [shown](Old%20Name.md#Part) here.", "See [shown](<Old Name.md#Part>) here.", "See [shown](Old.md#Part) here.",
        "See ![shown](caf\u{E9}.png#Part) here.",
    ]

    @Test(arguments: notes)
    func encodedDestinationsReadBackAsTheirPaths(_ note: String) throws {
        let link = try #require(NoteText.scan(note).links.first)
        let original = Array(note.utf8)[link.targetRange]
        for path in Self.paths {
            let written = LinkRewriter.encoded(path, like: Substring(decoding: original, as: UTF8.self))
            var bytes = Array(note.utf8)
            bytes.replaceSubrange(link.targetRange, with: Array(written.utf8))
            let rewritten = String(decoding: bytes, as: UTF8.self)
            let again = NoteText.scan(rewritten).links
            #expect(again.count == 1, "\(rewritten)")
            #expect(again.first?.target == path, "\(rewritten)")
            #expect(again.first?.heading == "Part", "\(rewritten)")
            #expect(again.first?.shownText == "shown", "\(rewritten)")
        }
    }
}

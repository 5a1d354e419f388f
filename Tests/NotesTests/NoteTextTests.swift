import Notes
import TestSupport
import Testing

/// NoteText.scan: wiki links, markdown links, tags, what is no text (code, comments, front
/// matter), byte ranges, lines, and hostile input.
@Suite struct NoteTextTests {
    /// The text of `range` in `text`'s UTF-8 bytes.
    private func slice(_ text: String, _ range: Range<Int>) -> String {
        String(decoding: Array(text.utf8)[range], as: UTF8.self)
    }

    /// `text` with `range` (UTF-8 byte offsets) replaced by `replacement`.
    private func replacing(_ range: Range<Int>, in text: String, with replacement: String) -> String {
        var bytes = Array(text.utf8)
        bytes.replaceSubrange(range, with: Array(replacement.utf8))
        return String(decoding: bytes, as: UTF8.self)
    }

    private func onlyLink(_ text: String) -> NoteLink? {
        let links = NoteText.scan(text).links
        #expect(links.count == 1, "\(text): \(links)")
        return links.first
    }

    private func tagNames(_ text: String) -> [String] {
        NoteText.scan(text).tags.map(\.name)
    }

    /// One link in a text: what it is expected to hold; `rawTarget` is the target's bytes as
    /// written when they differ from the target.
    struct LinkCase: Sendable, CustomStringConvertible {
        var text: String
        var target: String
        var heading: String?
        var shown: String?
        var rawTarget: String?
        var isEmbed = false
        var description: String { text }
    }

    /// The text's one link is `expected`, of `style`, its range from `opening` to `closing`.
    private func expectOnlyLink(_ expected: LinkCase, style: NoteLink.Style, opening: String, closing: String) throws {
        let link = try #require(onlyLink(expected.text))
        #expect(link.style == style)
        #expect(link.isEmbed == expected.isEmbed)
        #expect(link.target == expected.target)
        #expect(link.heading == expected.heading)
        #expect(link.shownText == expected.shown)
        #expect(slice(expected.text, link.targetRange) == expected.rawTarget ?? expected.target)
        #expect(slice(expected.text, link.range).hasPrefix(expected.isEmbed ? "!" + opening : opening))
        #expect(slice(expected.text, link.range).hasSuffix(closing))
        let linesBefore = Array(expected.text.utf8)[..<link.range.lowerBound].filter { $0 == UInt8(ascii: "\n") }.count
        #expect(link.line == 1 + linesBefore)
    }

    @Test(arguments: [
        LinkCase(text: "see [[target]] here", target: "target"),
        LinkCase(text: "[[target|shown]]", target: "target", shown: "shown"),
        LinkCase(text: "[[target#Heading]]", target: "target", heading: "Heading"),
        LinkCase(text: "[[target#Heading|shown text]]", target: "target", heading: "Heading", shown: "shown text"),
        LinkCase(text: "[[#Heading]]", target: "", heading: "Heading"),
        LinkCase(text: "[[Folder/Title]]", target: "Folder/Title"),
        LinkCase(text: "[[pic.png]]", target: "pic.png"),
        LinkCase(text: "![[pic.png]]", target: "pic.png", isEmbed: true),
        LinkCase(text: "![[Note#Part|x]]", target: "Note", heading: "Part", shown: "x", isEmbed: true),
        LinkCase(text: "[[ spaced title ]]", target: "spaced title"),
        LinkCase(text: "[[a#b#c]]", target: "a", heading: "b#c"),
        LinkCase(text: "[[a|b|c]]", target: "a", shown: "b|c"),
        LinkCase(text: "[[a#]]", target: "a", heading: ""),
        LinkCase(text: "| [[a\\|b]] |", target: "a", shown: "b"),
        LinkCase(text: "[[a]b]]", target: "a]b"),
        LinkCase(text: "[[[a]]", target: "a"),
        LinkCase(text: "[[Ünïcödé 日本]]", target: "Ünïcödé 日本"),
    ])
    func wikiLinks(_ wiki: LinkCase) throws {
        try expectOnlyLink(wiki, style: .wiki, opening: "[[", closing: "]]")
    }

    @Test func replacingAWikiTargetKeepsHeadingAndShownText() throws {
        let text = "a [[Old Name#Part|shown]] b [[#Top]]"
        let links = NoteText.scan(text).links
        #expect(links.count == 2)
        #expect(replacing(links[0].targetRange, in: text, with: "New") == "a [[New#Part|shown]] b [[#Top]]")
        #expect(replacing(links[1].targetRange, in: text, with: "Other") == "a [[Old Name#Part|shown]] b [[Other#Top]]")
    }

    @Test(arguments: [
        "[[a\nb]]",  // does not span lines
        "[[a",  // no closing
        "[[a] ]",
        "[[]]",
        "[[ \t ]]",
        "\\[[a]]",  // escaped
        "[\\[a]]",
    ])
    func notWikiLinks(_ text: String) {
        #expect(NoteText.scan(text).links.isEmpty, "\(text)")
    }

    @Test func aLaterDoubleBracketStartsTheLink() {
        let links = NoteText.scan("[[a [[b]] and [[c]]").links
        #expect(links.map(\.target) == ["b", "c"])
    }

    @Test(arguments: [
        LinkCase(text: "see [text](Other.md) here", target: "Other.md", shown: "text", rawTarget: "Other.md"),
        LinkCase(text: "[text](Other.md \"a title\")", target: "Other.md", shown: "text", rawTarget: "Other.md"),
        LinkCase(text: "[text](Other.md 'a title')", target: "Other.md", shown: "text", rawTarget: "Other.md"),
        LinkCase(text: "[text]( Other.md (a title) )", target: "Other.md", shown: "text", rawTarget: "Other.md"),
        LinkCase(text: "[x](<My Note.md>)", target: "My Note.md", shown: "x", rawTarget: "My Note.md"),
        LinkCase(text: "[x](<My Note.md#Some Part>)", target: "My Note.md", heading: "Some Part", shown: "x", rawTarget: "My Note.md"),
        LinkCase(text: "![alt text](pic.png)", target: "pic.png", shown: "alt text", rawTarget: "pic.png", isEmbed: true),
        LinkCase(text: "[x](a(b).md)", target: "a(b).md", shown: "x", rawTarget: "a(b).md"),
        LinkCase(text: "[x](../Work/Plan%20B.md)", target: "../Work/Plan B.md", shown: "x", rawTarget: "../Work/Plan%20B.md"),
        LinkCase(text: "[x](bad%zz%4.md)", target: "bad%zz%4.md", shown: "x", rawTarget: "bad%zz%4.md"),
        LinkCase(text: "[x](half%FF.md)", target: "half%FF.md", shown: "x", rawTarget: "half%FF.md"),
        LinkCase(text: "[x](caf%C3%A9.md)", target: "café.md", shown: "x", rawTarget: "caf%C3%A9.md"),
        LinkCase(text: "[x](#Heading)", target: "", heading: "Heading", shown: "x", rawTarget: ""),
        LinkCase(text: "[x](Note.md#My%20Heading)", target: "Note.md", heading: "My Heading", shown: "x", rawTarget: "Note.md"),
        LinkCase(text: "[x](/x)", target: "/x", shown: "x", rawTarget: "/x"),
        LinkCase(text: "[x](//host/x)", target: "//host/x", shown: "x", rawTarget: "//host/x"),
        LinkCase(text: "[x](a\\(b.md)", target: "a(b.md", shown: "x", rawTarget: "a\\(b.md"),
        LinkCase(text: "[a `]` b](c.md)", target: "c.md", shown: "a `]` b", rawTarget: "c.md"),
        LinkCase(text: "[a [b] c](d.md)", target: "d.md", shown: "a [b] c", rawTarget: "d.md"),
        LinkCase(text: "[two\nlines](d.md)", target: "d.md", shown: "two\nlines", rawTarget: "d.md"),
        LinkCase(text: "[](empty-text.md)", target: "empty-text.md", shown: "", rawTarget: "empty-text.md"),
        LinkCase(text: "\\![x](not-an-image.md)", target: "not-an-image.md", shown: "x", rawTarget: "not-an-image.md"),
    ])
    func markdownLinks(_ markdown: LinkCase) throws {
        try expectOnlyLink(markdown, style: .markdown, opening: "[", closing: ")")
    }

    @Test(arguments: [
        "[x](https://example.com/a.md)", "[x](mailto:a@b.c)", "[x](obsidian://open?vault=v)", "[x](c+d.e-f:stuff)", "[x]()",
        "[x](<>)", "[x](#)", "[x][ref]\n\n[ref]: a.md", "[x](a b)", "[x](a.md", "[x](a.md \"title)", "[x] (a.md)", "\\[x](a.md)",
        "[x](a(b.md)", "[x](<a\nb>)", "[x](a.md\n\"title\")",
    ])
    func notReportedMarkdownLinks(_ text: String) {
        #expect(NoteText.scan(text).links.isEmpty, "\(text)")
    }

    @Test func linksInsideALinkWinAndImagesMayHoldLinks() {
        #expect(NoteText.scan("[a [b](c.md)](d.md)").links.map(\.target) == ["c.md"])
        #expect(NoteText.scan("[a [b](c.md) [d](e.md)](f.md) [g](h.md)").links.map(\.target) == ["c.md", "e.md", "h.md"])
        #expect(NoteText.scan("[[a]] [[b]] [c](d.md) [[e]]").links.map(\.target) == ["a", "b", "d.md", "e"])
        let links = NoteText.scan("![a [b](c.md)](d.png)").links
        #expect(links.map(\.target) == ["d.png", "c.md"])
        #expect(links.map(\.isEmbed) == [true, false])
    }

    @Test func aBlankLineEndsTheLinkText() {
        #expect(NoteText.scan("[a\n \t\n](b.md)").links.isEmpty)
        #expect(NoteText.scan("[a\nwords ~~~ zz\n](b.md)").links.map(\.target) == ["b.md"])
    }

    @Test func parenthesesNestAtMost32Deep() {
        let deep = String(repeating: "(", count: 32) + String(repeating: ")", count: 32)
        #expect(NoteText.scan("[x](a\(deep).md)").links.count == 1)
        let tooDeep = String(repeating: "(", count: 33) + String(repeating: ")", count: 33)
        #expect(NoteText.scan("[x](a\(tooDeep).md)").links.isEmpty)
    }

    @Test func codeSpansHideLinksAndTags() {
        #expect(NoteText.scan("`[[a]] #t [b](c.md)`").links.isEmpty)
        #expect(NoteText.scan("`[[a]] #t`").tags.isEmpty)
        #expect(NoteText.scan("``a ` [[b]] #t``").links.isEmpty)
        #expect(NoteText.scan("``a ` [[b]] #t``").tags.isEmpty)
        // A run of two closes only with a run of exactly two.
        #expect(NoteText.scan("``a ``` [[b]] ``").links.isEmpty)
        #expect(NoteText.scan("``a [[b]] `").links.map(\.target) == ["b"])
        #expect(NoteText.scan("`a\nb [[c]]` [[d]]").links.map(\.target) == ["d"])
        // Not across a blank line or a fence.
        #expect(NoteText.scan("`a\n\n[[b]] `").links.map(\.target) == ["b"])
        #expect(NoteText.scan("\\`[[a]]`").links.map(\.target) == ["a"])
    }

    @Test func fencedCodeHidesLinksAndTags() {
        let text = """
            [[before]]
            ```swift
            [[inside]] #inside
            ```
            ~~~~
            [[tilde]]
            ~~~
            ```
            [[still tilde]]
            ~~~~~
            [[after]] #after
               ```
            [[indented fence]]
               ```
            """
        let scanned = NoteText.scan(text)
        #expect(scanned.links.map(\.target) == ["before", "after"])
        #expect(scanned.links.map(\.line) == [1, 11])
        #expect(scanned.tags.map(\.name) == ["after"])
        #expect(NoteText.scan("a\n```\n[[unclosed]]\n\n#x").links.isEmpty)
        #expect(NoteText.scan("a\n```\n[[unclosed]]\n\n#x").tags.isEmpty)
        // A backtick fence's info string holds no backtick: this is a code span line.
        #expect(NoteText.scan("``` a ` b\n[[link]]").links.map(\.target) == ["link"])
        // Indented code blocks are text.
        #expect(NoteText.scan("para\n\n    [[x]]").links.map(\.target) == ["x"])
    }

    @Test func commentsHideLinksAndTags() {
        let scanned = NoteText.scan("<!-- [[a]] #t\n\n[b](c.md) --> [[d]] #u <!---->[[e]]<!-->[[f]]")
        #expect(scanned.links.map(\.target) == ["d", "e", "f"])
        #expect(scanned.tags.map(\.name) == ["u"])
        #expect(NoteText.scan("<!-- [[open]] #t").links.map(\.target) == ["open"])
        #expect(NoteText.scan("<!-- [[open]] #t").tags.map(\.name) == ["t"])
    }

    @Test func frontMatterIsSkippedAndLinesCountIt() {
        let text = "---\ntitle: \"[[no]]\"\ntags: [x]\n#notatag: 1\n---\n[[yes]] #tag\n\n[m](m.md)"
        let scanned = NoteText.scan(text)
        #expect(scanned.links.map(\.target) == ["yes", "m.md"])
        #expect(scanned.links.map(\.line) == [6, 8])
        #expect(scanned.tags.map(\.name) == ["tag"])
        #expect(scanned.tags.map(\.line) == [6])
        #expect(scanned.tags.allSatisfy { !$0.inFrontMatter })
    }

    @Test func escapesOpenNothing() {
        let scanned = NoteText.scan("\\[[a]] \\[b](c.md) \\#tag \\`[[d]]`")
        #expect(scanned.links.map(\.target) == ["d"])
        #expect(scanned.tags.isEmpty)
    }

    @Test func tags() {
        #expect(
            tagNames("#tag #nested/tag #tag-with_dash #café #日本語 #Ünïcödé") == [
                "tag", "nested/tag", "tag-with_dash", "café", "日本語", "Ünïcödé",
            ])
        #expect(tagNames("#a/ #b// #/ #-x") == ["a", "b", "-x"])
        #expect(
            tagNames("#tag, #end. #x's (#paren) [#bracket] x,#comma |#cell| >#quote") == [
                "tag", "end", "x", "paren", "bracket", "comma", "cell", "quote",
            ])
        #expect(tagNames("#1a #a1 #1_ #1/2") == ["1a", "a1", "1_", "1/2"])
        #expect(tagNames("\u{00A0}#nbsp\u{3000}#ideographic") == ["nbsp", "ideographic"])
    }

    @Test(arguments: [
        "a#b", "http://x/#frag", "https://x.com#frag", "[x](y.md#h)", "[x](#h)", "# Heading", "## Heading", "###### H", "#123", "#1/",
        "#", "# ", "#!", "`#code`", "<!-- #c -->", "[[Note#tag]]", "[[#tag]]", "&#123;", "##double", "x/#y", "\\#esc", "#🎉",
        "[x](https://a.b/c#frag)", "[x](https://a.b/ \"#title\")",
    ])
    func notTags(_ text: String) {
        #expect(tagNames(text).isEmpty, "\(text)")
    }

    @Test func tagRangesAndLines() {
        let text = "# Title #one\nbody #two/three\n\n  #four"
        let tags = NoteText.scan(text).tags
        #expect(tags.map(\.name) == ["one", "two/three", "four"])
        #expect(tags.map(\.line) == [1, 2, 4])
        for tag in tags {
            #expect(slice(text, tag.range) == tag.name)
            #expect(slice(text, tag.range.lowerBound - 1..<tag.range.lowerBound) == "#")
        }
    }

    @Test func tagsLongerThan512BytesAreNoTags() {
        let longest = String(repeating: "a", count: 512)
        #expect(tagNames("#\(longest) x") == [longest])
        #expect(tagNames("#\(longest)b x #after").count == 1)
        #expect(tagNames("#\(String(repeating: "é", count: 5_000)) #after") == ["after"])
        #expect(tagNames("#" + String(repeating: "t", count: 10_000)).isEmpty)
    }

    @Test func linksAndTagsComeInTextOrderWithLines() {
        let text = "[[a]] [b](b.md)\n#t1 ![[c]]\n\n![d](d.png) #t2 [[e#h]]"
        let scanned = NoteText.scan(text)
        #expect(scanned.links.map(\.target) == ["a", "b.md", "c", "d.png", "e"])
        #expect(scanned.links.map(\.line) == [1, 1, 2, 4, 4])
        #expect(scanned.tags.map(\.name) == ["t1", "t2"])
        #expect(scanned.tags.map(\.line) == [2, 4])
        for link in scanned.links { #expect(slice(text, link.targetRange) == link.target) }
    }

    @Test func replacingEveryTargetWithItselfGivesTheSameText() {
        var text = "---\nk: v\n---\n"
        for index in 0..<300 {
            text += "line \(index) [[Note \(index)#H|s]] and [x](Dir/N%20\(index).md#p) ![[img\(index).png]] #tag\(index)\n"
            if index % 7 == 0 { text += "```\n[[hidden]]\n```\n" }
        }
        let links = NoteText.scan(text).links
        #expect(links.count == 900)
        var rebuilt = text
        for link in links.reversed() {
            rebuilt = replacing(link.targetRange, in: rebuilt, with: slice(text, link.targetRange))
        }
        #expect(rebuilt == text)
        // Renaming every target to X keeps everything else.
        var renamed = text
        for link in links.reversed() { renamed = replacing(link.targetRange, in: renamed, with: "X") }
        let again = NoteText.scan(renamed).links
        #expect(again.count == 900)
        #expect(again.allSatisfy { $0.target == "X" })
        #expect(again.map(\.heading) == links.map(\.heading))
        #expect(again.map(\.shownText) == links.map(\.shownText))
    }

    // Hostile input: each must finish (a hang or a crash shows); no times are asserted. The counts the
    // linear bounds are about are 200,000 where the rules name them; the other shapes use fewer.

    @Test(.tags(.slow)) func manyLinks() {
        let text = String(repeating: "[[a]] [b](c.md) ", count: 50_000)
        #expect(NoteText.scan(text).links.count == 100_000)
    }

    @Test(.tags(.slow)) func deepAndLongRunsOfBrackets() {
        let nested = String(repeating: "[", count: 1_000) + "x" + String(repeating: "](a.md)", count: 1_000)
        #expect(NoteText.scan(nested).links.count == 1)
        #expect(NoteText.scan(String(repeating: "[", count: 100_000)).links.isEmpty)
        #expect(NoteText.scan(String(repeating: "[[", count: 200_000)).links.isEmpty)
        #expect(NoteText.scan(String(repeating: "[[a", count: 200_000) + "]]").links.count == 1)
        #expect(NoteText.scan(String(repeating: "![[", count: 200_000)).links.isEmpty)
        #expect(NoteText.scan(String(repeating: "]]", count: 200_000)).links.isEmpty)
        #expect(NoteText.scan(String(repeating: "[", count: 200_000) + String(repeating: "](", count: 50_000)).links.isEmpty)
        #expect(NoteText.scan(String(repeating: "[](", count: 50_000)).links.isEmpty)
        #expect(NoteText.scan(String(repeating: "[a](b", count: 50_000)).links.isEmpty)
        #expect(NoteText.scan(String(repeating: "[a](<b", count: 50_000)).links.isEmpty)
        #expect(NoteText.scan(String(repeating: "[a](b \"", count: 50_000)).links.isEmpty)
        #expect(NoteText.scan(String(repeating: "[a](b (", count: 50_000)).links.isEmpty)
        #expect(NoteText.scan(String(repeating: "[a](()", count: 50_000)).links.isEmpty)
        #expect(NoteText.scan(String(repeating: "](", count: 50_000)).links.isEmpty)
    }

    @Test(.tags(.slow)) func manyUnmatchedCodeCommentsAndFences() {
        var runs = ""
        for length in 1...1_500 { runs += String(repeating: "`", count: length) + " [[x]] " }
        #expect(NoteText.scan(runs).links.isEmpty == false)
        #expect(NoteText.scan(String(repeating: "` ", count: 200_000)).links.isEmpty)
        #expect(NoteText.scan(String(repeating: "<!-- ", count: 200_000)).links.isEmpty)
        #expect(NoteText.scan(String(repeating: "```\n", count: 100_001)).links.isEmpty)
        #expect(NoteText.scan(String(repeating: "````` `\n", count: 100_000)).links.isEmpty)
        #expect(NoteText.scan(String(repeating: "#", count: 200_000)).tags.isEmpty)
        #expect(NoteText.scan(String(repeating: " #1", count: 200_000)).tags.isEmpty)
    }

    @Test(.tags(.slow)) func largeTextsAndLongLines() {
        let tenMegabytes = String(repeating: "Some words [[Link]] #tag and `code` here.\n", count: 250_000)
        let scanned = NoteText.scan(tenMegabytes)
        #expect(scanned.links.count == 250_000)
        #expect(scanned.tags.count == 250_000)
        #expect(scanned.links.last?.line == 250_000)
        let longLine = String(repeating: "x", count: 1 << 20) + " [[end]] #end"
        #expect(NoteText.scan(longLine).links.map(\.target) == ["end"])
        #expect(NoteText.scan(String(repeating: "[x](", count: 1 << 18)).links.isEmpty)
    }

    @Test func binaryBytes() {
        var generator = SeededGenerator(state: 42)
        let alphabet = Array("[]()!#`<>-|\\\n ~a".utf8)
        for _ in 0..<200 {
            let bytes = (0..<2_000).map { _ in
                generator.next() % 3 == 0
                    ? UInt8(truncatingIfNeeded: generator.next()) : alphabet[Int(generator.next() % UInt64(alphabet.count))]
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let scanned = NoteText.scan(text)
            let count = text.utf8.count
            for link in scanned.links {
                #expect(link.range.upperBound <= count && link.targetRange.lowerBound >= link.range.lowerBound)
                #expect(link.targetRange.upperBound <= link.range.upperBound)
            }
            for tag in scanned.tags { #expect(tag.range.upperBound <= count) }
        }
        #expect(NoteText.scan(String(decoding: [0xFF, 0x23, 0x61, 0xC3], as: UTF8.self)).tags.isEmpty)
    }
}

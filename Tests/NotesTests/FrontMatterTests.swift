import Foundation
import Notes
import Testing

/// `FrontMatter.parse`: the YAML subset of Obsidian properties read into typed properties and tags,
/// each rule of its comment; hostile front matter is an error or not read, never a crash or a
/// blow-up, and the note's text is never changed.
@Suite struct FrontMatterTests {
    private func parse(_ yaml: String, body: String = "Body\n") -> FrontMatter? {
        FrontMatter.parse("---\n" + yaml + "---\n" + body)
    }

    /// The value of the one property `key: <written>`.
    private func value(_ written: String) -> PropertyValue? {
        parse("key: \(written)\n")?["key"]
    }

    private func date(_ iso: String) -> PropertyValue {
        .date(ISO8601DateFormatter().date(from: iso)!)
    }

    /// The bytes of `range` in `text`, as a string.
    private func slice(_ text: String, _ range: Range<Int>) -> String {
        String(decoding: Array(text.utf8)[range], as: UTF8.self)
    }

    @Test func aNoteWithoutABlockHasNoFrontMatter() {
        #expect(FrontMatter.parse("") == nil)
        #expect(FrontMatter.parse("Title\n---\nkey: 1\n---\n") == nil)
        #expect(FrontMatter.parse("---\nkey: 1\n") == nil)  // never closed
    }

    @Test func anEmptyBlockHasNoProperties() {
        #expect(parse("") == FrontMatter())
        #expect(parse("\n# only a comment\n\n") == FrontMatter())
    }

    @Test(arguments: [
        ("true", PropertyValue.bool(true)), ("False", .bool(false)), ("TRUE", .bool(true)), ("tRuE", .bool(true)),
        ("yes", .text("yes")), ("no", .text("no")), ("on", .text("on")),
        ("3", .number(3)), ("-2.5", .number(-2.5)), ("1e3", .number(1000)), ("+1", .number(1)), (".5", .number(0.5)),
        ("007", .number(7)), ("2.", .number(2)), ("1E-2", .number(0.01)),
        ("0x1F", .text("0x1F")), (".inf", .text(".inf")), (".nan", .text(".nan")), ("1e999", .text("1e999")),
        ("1,000", .text("1,000")), ("3 apples", .text("3 apples")),
        ("null", .text("")), ("NULL", .text("")), ("~", .text("")), ("", .text("")), ("# just a comment", .text("")),
        ("hello world", .text("hello world")), ("a#b", .text("a#b")), ("text # comment", .text("text")),
        ("https://example.com/a?b=c#d", .text("https://example.com/a?b=c#d")), ("  spaced  ", .text("spaced")),
        ("\"3\"", .text("3")), ("'true'", .text("true")), ("\"2026-12-10\"", .text("2026-12-10")),
        ("''", .text("")), ("\"\"", .text("")),
    ])
    func plainScalarsAreTypedAndQuotedOnesAreText(written: String, expected: PropertyValue) {
        #expect(value(written) == expected, "key: \(written)")
    }

    @Test func datesAreMidnightUTCOrTheTimeWritten() {
        #expect(value("2026-12-10") == date("2026-12-10T00:00:00Z"))
        #expect(value("2026-12-10T09:30") == date("2026-12-10T09:30:00Z"))
        #expect(value("2026-12-10t09:30") == date("2026-12-10T09:30:00Z"))
        #expect(value("2026-12-10 09:30") == date("2026-12-10T09:30:00Z"))
        #expect(value("2026-12-10T09:30:15Z") == date("2026-12-10T09:30:15Z"))
        #expect(value("2026-12-10T09:30:00+01:00") == date("2026-12-10T08:30:00Z"))
        #expect(value("2026-12-10T09:30-0230") == date("2026-12-10T12:00:00Z"))
        #expect(value("2026-12-10 09:30:00 +01") == date("2026-12-10T08:30:00Z"))
        #expect(value("2024-02-29") == date("2024-02-29T00:00:00Z"))
        #expect(value("1969-07-20T20:17Z") == date("1969-07-20T20:17:00Z"))
        #expect(
            value("2026-12-10T09:30:00.250Z") == .date(ISO8601DateFormatter().date(from: "2026-12-10T09:30:00Z")!.addingTimeInterval(0.25)))
        for invalid in ["2026-02-29", "2026-13-01", "2026-12-32", "2026-12-10T24:00", "2026-12-10T09:60", "2026-1-5", "2026-12-10 x"] {
            #expect(value(invalid) == .text(invalid.trimmingCharacters(in: .whitespaces)), "\(invalid)")
        }
    }

    @Test func quotedStringsDecodeYAMLEscapes() {
        #expect(value(#""say \"hi\" \\ \/ \n\t\u00e9\x41\U0001F600""#) == .text("say \"hi\" \\ / \n\té" + "A\u{1F600}"))
        #expect(value("'it''s # not a comment'") == .text("it's # not a comment"))
        #expect(value(#""a # b"  # a comment"#) == .text("a # b"))
        let unknown = parse("key: \"\\q\"\nother: 1\n")
        #expect(unknown?.error == "line 2: `key`: unknown escape `\\q` in a quoted value")
        #expect(unknown?.properties.map(\.key) == ["other"])
    }

    @Test func keysArePlainOrQuotedAndLookedUpIgnoringCase() throws {
        let fm = try #require(parse("Due Date : 1\n\"my key\": 2\n'it''s': 3\n\"tight\":4\nkey:\tvalue\n"))
        #expect(fm.properties.map(\.key) == ["Due Date", "my key", "it's", "tight", "key"])
        #expect(fm["due date"] == .number(1))
        #expect(fm["MY KEY"] == .number(2))
        #expect(fm["it's"] == .number(3))
        #expect(fm["tight"] == .number(4))
        #expect(fm["key"] == .text("value"))
        #expect(fm["missing"] == nil)
        #expect(fm.error == nil)
    }

    @Test func aKeyWrittenAgainReplacesTheEarlierOne() throws {
        let fm = try #require(parse("a: 1\nb: 2\nA: 3\n"))
        #expect(fm.properties == [Property(key: "b", value: .number(2), line: 3), Property(key: "A", value: .number(3), line: 4)])
        #expect(fm["a"] == .number(3))
    }

    @Test func linesCountFromTheNotesFirstLine() throws {
        let fm = try #require(parse("# comment\n\none: 1\nlist:\n  - a\n  - b\ntwo: 2\n"))
        #expect(fm.properties.map(\.line) == [4, 5, 8])
    }

    @Test func aKeyWithNoValueIsEmptyText() throws {
        let fm = try #require(parse("empty:\nnull: null\ntilde: ~\nnext: 1\n"))
        #expect(fm.properties.map(\.value) == [.text(""), .text(""), .text(""), .number(1)])
        #expect(fm.error == nil)
    }

    @Test func flowAndBlockListsAreListsOfText() throws {
        let fm = try #require(
            parse(
                """
                flow: [a, 2, "c, d", 'e', 2026-12-10,  ]
                empty: []
                block:
                  - a
                  - 3.0
                  - "quoted: yes"
                  -
                  - # a comment: an empty item
                unindented:
                - x
                - y
                after: 1

                """))
        #expect(fm["flow"] == .list(["a", "2", "c, d", "e", "2026-12-10"]))
        #expect(fm["empty"] == .list([]))
        #expect(fm["block"] == .list(["a", "3.0", "quoted: yes", "", ""]))
        #expect(fm["unindented"] == .list(["x", "y"]))
        #expect(fm["after"] == .number(1))
        #expect(fm.error == nil)
    }

    @Test func blockScalarsAreText() throws {
        let fm = try #require(
            parse(
                """
                literal: |
                  line one
                    indented

                  line three
                folded: >-
                  one
                  two

                  three
                next: |+ # a comment
                  # not a comment
                last: 1

                """))
        #expect(fm["literal"] == .text("line one\n  indented\n\nline three"))
        #expect(fm["folded"] == .text("one two\nthree"))
        #expect(fm["next"] == .text("# not a comment"))
        #expect(fm["last"] == .number(1))
        #expect(fm.error == nil)
    }

    @Test func aPlainValueGoesOnOverIndentedLines() throws {
        let fm = try #require(parse("summary: a long\n  sentence\n  here\nnumber:\n  42\nnext: 1\n"))
        #expect(fm["summary"] == .text("a long sentence here"))
        #expect(fm["number"] == .number(42))
        #expect(fm.properties.count == 3)
    }

    @Test func tagsFromEveryFormWithTheirBytesInTheNote() throws {
        let yaml = """
            title: T
            tags: [one, "#two", 'three', "bad tag", nested/tag]
            tag: four, #five six
            other: [seven]

            """
        let text = "---\n" + yaml + "---\n#body text\n"
        let fm = try #require(FrontMatter.parse(text))
        #expect(fm.tags.map(\.name) == ["one", "two", "three", "nested/tag", "four", "five", "six"])
        for tag in fm.tags {
            #expect(slice(text, tag.range) == tag.name)
            #expect(tag.inFrontMatter)
        }
        #expect(fm.tags.map(\.line) == [3, 3, 3, 3, 4, 4, 4])
        #expect(fm["tags"] == .list(["one", "two", "three", "bad tag", "nested/tag"]))
        #expect(fm["tag"] == .list(["four", "five", "six"]))
        #expect(fm.error == nil)
    }

    @Test func blockListTagsAndTagsThatAreNoTagNames() throws {
        let text = "---\ntags:\n  - \"#Écrit\"\n  - '#1984'\n  - a b\n  - \"\\u0041\"\n  - x!\n  - #hash\n  -\n---\n"
        let fm = try #require(FrontMatter.parse(text))
        #expect(fm.tags.map(\.name) == ["Écrit", "1984", "hash"])
        #expect(fm.tags.map { slice(text, $0.range) } == ["Écrit", "1984", "hash"])
        #expect(fm.tags.map(\.line) == [3, 4, 8])
        #expect(fm["tags"] == .list(["Écrit", "1984", "a b", "A", "x!", "hash"]))
        let empty = try #require(FrontMatter.parse("---\ntags:\n---\n"))
        #expect(empty["tags"] == .list([]))
    }

    @Test func tagsWithHashesCommentsAndQuotedOrIndentedValues() throws {
        let text = "---\ntags: #a, b # a comment\ntag: [#c, \"d e\"]\nTAGS:\n  f g\n  h\n---\n"
        let fm = try #require(FrontMatter.parse(text))
        #expect(fm["tag"] == .list(["c", "d e"]))
        #expect(fm["tags"] == .list(["f", "g", "h"]))
        #expect(fm.tags.map(\.name) == ["c", "f", "g", "h"])
        #expect(fm.tags.map { slice(text, $0.range) } == ["c", "f", "g", "h"])
        #expect(fm.tags.map(\.line) == [3, 5, 5, 6])
        let quoted = try #require(parse("tags: \"x, #y\"\n"))
        #expect(quoted.tags.map(\.name) == ["x", "y"])
        let comment = try #require(parse("tags: a # b\n"))
        #expect(comment["tags"] == .list(["a"]))
    }

    @Test func tagsWrittenAgainReplaceTheEarlierOnes() throws {
        let fm = try #require(parse("tags: [a]\ntag: b\nTags: [c]\n"))
        #expect(fm.tags.map(\.name) == ["b", "c"])
    }

    @Test func nestedMapsAreAnErrorForTheirKeyOnly() throws {
        let fm = try #require(parse("a: 1\nmap:\n  inner: 2\n  other: 3\nb: 2\nflow: {x: 1}\n"))
        #expect(fm.error == "line 4: `map`: nested maps are not supported")
        #expect(fm.properties.map(\.key) == ["a", "b"])
    }

    @Test(arguments: [
        ("key: &a value", "line 2: `key`: anchors and aliases are not supported (`&a`, `*a`)"),
        ("key: *a", "line 2: `key`: anchors and aliases are not supported (`&a`, `*a`)"),
        ("key: [a, *b]", "line 2: `key`: anchors and aliases are not supported (`&a`, `*a`)"),
        ("&k key: 1", "line 2: anchors and aliases are not supported (`&a`, `*a`)"),
        ("key: !!str 3", "line 2: `key`: explicit tags such as `!!str` are not supported"),
        ("key: {a: 1}", "line 2: `key`: nested maps are not supported"),
        ("key: [a, [b]]", "line 2: `key`: nested lists and maps are not supported"),
        ("key: [a: 1]", "line 2: `key`: nested maps are not supported"),
        ("key:\n  - - a", "line 3: `key`: nested lists are not supported"),
        ("key:\n  - a: 1", "line 3: `key`: nested maps are not supported"),
        ("key:\n  - a\n    b", "line 4: `key`: a list item that goes on over several lines is not supported"),
        ("key:\n  - a\n - b", "line 4: `key`: its list items do not line up"),
        ("key: \"open", "line 2: `key`: a quoted value does not end on its line (quoted values over several lines are not supported)"),
        ("key: [a, b", "line 2: `key`: a list in brackets does not end on its line (`]` missing)"),
        ("key: [a] b", "line 2: `key`: unexpected text after the list"),
        ("key: \"a\" b", "line 2: `key`: unexpected text after the quoted value"),
        ("key: a: b", "line 2: `key`: a value holding `: ` must be quoted"),
        ("key: |2\n  a", "line 2: `key`: indentation indicators (`|2`) are not supported"),
        ("key: \"a\"\n  b", "line 3: `key`: the value goes on after its end"),
        ("key: - a", "line 2: `key`: a list item must start its own line"),
        ("just text", "line 2: expected `key: value`"),
        ("- item", "line 2: a list item that belongs to no key"),
        ("  indented: 1", "line 2: an indented line that belongs to no key"),
        ("? complex", "line 2: complex keys (`? …`) are not supported"),
        (": value", "line 2: a key is empty"),
        ("key:\n\t- a", "line 3: `key`: a tab indents this line (YAML indents with spaces only)"),
        ("key: @x", "line 2: `key`: a value cannot start with `@` or a backquote unless it is quoted"),
    ])
    func whatIsNotInTheSubsetIsAClearError(yaml: String, error: String) throws {
        let fm = try #require(parse(yaml + "\nafter: 1\n"))
        #expect(fm.error == error)
        #expect(fm["after"] == .number(1), "the keys after the error are read")
        #expect(fm["key"] == nil)
    }

    @Test func aYAMLBombIsRefusedWithoutExpanding() throws {
        var yaml = "a: &a [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n"
        for level in 1..<10 { yaml += "l\(level): &l\(level) [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n" }
        let fm = try #require(parse(yaml + "fine: yes\n"))
        #expect(fm.error == "line 2: `a`: anchors and aliases are not supported (`&a`, `*a`)")
        #expect(fm.properties == [Property(key: "fine", value: .text("yes"), line: 12)])
    }

    @Test func deepNestingIsAnErrorWithoutRecursion() throws {
        let brackets = try #require(parse("key: " + String(repeating: "[", count: 500_000) + "\nafter: 1\n"))
        #expect(brackets.error == "line 2: `key`: nested lists and maps are not supported")
        #expect(brackets["after"] == .number(1))
        let dashes = try #require(parse("key:\n  " + String(repeating: "- ", count: 200_000) + "a\nafter: 1\n"))
        #expect(dashes.error == "line 3: `key`: nested lists are not supported")
        let maps = try #require(
            parse("key:\n" + (1...1000).map { String(repeating: " ", count: $0) + "k\($0):\n" }.joined() + "after: 1\n"))
        #expect(maps.error == "line 3: `key`: nested maps are not supported")
        #expect(maps.properties.map(\.key) == ["after"])
    }

    @Test func frontMatterBiggerThanTheLimitIsNotRead() {
        let big = String(repeating: "key: value that repeats\n", count: 10_000_000 / 24)
        #expect(parse(big) == nil)
        #expect(FrontMatter.parse("---\n" + big) == nil)  // and never closed
    }

    @Test func aListOf100000ItemsIsReadAndOneMoreIsAnError() throws {
        let fm = try #require(parse("list:\n" + String(repeating: "- a\n", count: 100_000) + "after: 1\n"))
        #expect(fm.error == nil)
        if case .list(let items) = fm["list"] { #expect(items.count == 100_000) } else { Issue.record("not a list") }
        let over = try #require(parse("list:\n" + String(repeating: "- a\n", count: 100_001) + "after: 1\n"))
        #expect(over.error == "line 100003: `list`: the list has more than 100,000 items")
        #expect(over["list"] == nil)
        #expect(over["after"] == .number(1))
        let flow = try #require(parse("flow: [" + String(repeating: "a,", count: 100_001) + "]\n"))
        #expect(flow.error == "line 2: `flow`: the list has more than 100,000 items")
    }

    @Test func moreThan10000PropertiesIsAnError() throws {
        let yaml = (1...10_001).map { "k\($0): \($0)\n" }.joined()
        let fm = try #require(parse(yaml))
        #expect(fm.properties.count == 10_000)
        #expect(fm.error == "line 10002: more than 10,000 properties: the rest is not read")
    }

    @Test func aValueOver64KiBIsAnErrorForItsKey() throws {
        let long = String(repeating: "x", count: 1_000_000)
        let fm = try #require(parse("a: 1\nlong: \(long)\nb: 2\n"))
        #expect(fm.error == "line 3: `long`: a value is longer than 64 KiB")
        #expect(fm.properties.map(\.key) == ["a", "b"])
        let limit = try #require(parse("exact: \(String(repeating: "z", count: 65_536))\n"))
        #expect(limit.error == nil)
        let quoted = try #require(parse("quoted: \"\(String(repeating: "y", count: 65_537))\"\n"))
        #expect(quoted.error == "line 2: `quoted`: a value is longer than 64 KiB")
        let block = try #require(parse("block: |\n" + String(repeating: "  0123456789abcdef\n", count: 5_000)))
        #expect(block.error?.hasSuffix(": `block`: a value is longer than 64 KiB") == true)
        #expect(block["block"] == nil)
    }

    @Test func invalidUTF8IsReadAsReplacementCharacters() throws {
        var bytes = Array("---\ntitle: caf".utf8)
        bytes += [0xC3, 0x28, 0xFF]
        bytes += Array("\ntags: [ok, b\u{FFFD}d]\n---\n".utf8)
        let text = String(decoding: bytes, as: UTF8.self)
        let fm = try #require(FrontMatter.parse(text))
        #expect(fm["title"] == .text("caf\u{FFFD}(\u{FFFD}"))
        #expect(fm.tags.map(\.name) == ["ok"])
        #expect(fm.error == nil)
    }

    @Test func crlfLineEnds() throws {
        let text = "---\r\ntitle: Hello\r\ncount: 3\r\ntags:\r\n  - a\r\n  - b\r\nbody: |\r\n  one\r\n  two\r\n---\r\nText\r\n"
        let fm = try #require(FrontMatter.parse(text))
        #expect(fm["title"] == .text("Hello"))
        #expect(fm["count"] == .number(3))
        #expect(fm["body"] == .text("one\ntwo"))
        #expect(fm.tags.map { slice(text, $0.range) } == ["a", "b"])
        #expect(fm.error == nil)
    }

    @Test func tabsSeparateButDoNotIndent() throws {
        let fm = try #require(parse("a:\t1\t# comment\nb: [x,\ty]\n\t\nc:\n\t- 3\nd: 4\n"))
        #expect(fm["a"] == .number(1))
        #expect(fm["b"] == .list(["x", "y"]))
        #expect(fm["d"] == .number(4))
        #expect(fm["c"] == nil)
        #expect(fm.error == "line 6: `c`: a tab indents this line (YAML indents with spaces only)")
    }

    @Test func parseIsPureAndAFailedReadKeepsTheNote() throws {
        let text = "---\ntitle: [unclosed\ntags: [keep]\n---\n# Heading\n\nBody #tag\n"
        let copy = text
        let fm = try #require(FrontMatter.parse(text))
        #expect(text == copy)
        #expect(fm.error == "line 2: `title`: a list in brackets does not end on its line (`]` missing)")
        #expect(fm.tags.map(\.name) == ["keep"])
        #expect(FrontMatter.parse(text) == fm)
    }
}

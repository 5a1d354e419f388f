import Foundation

/// A note's front matter read as typed properties: the YAML subset that Obsidian properties use.
/// Reading is pure: the note's text is never changed, whatever it holds.
///
/// Where: the block `FrontMatterBlock.ranges(in:)` finds (a first line `---` up to a line `---` or
/// `...`, at most `FrontMatterBlock.maximumBytes`); no block, no front matter (`parse` is nil). Line
/// numbers count from 1 in the whole note, so the first line of YAML is line 2.
///
/// Lines:
/// - `key: value` at indentation 0. A key is plain (`due date: 1`, trailing spaces dropped) or quoted
///   (`"my key": 1`, `'it''s': 2`); `:` must be followed by a space, a tab or the line end. A value
///   may start after spaces or tabs.
/// - Blank lines and comments are ignored: `#` at the start of a line's content, or after a space
///   or tab. One exception: in the value of `tags` or `tag`, a `#` directly followed by a non-blank
///   character starts an entry (`tags: #a #b`), not a comment.
/// - Lines end with `\n` or `\r\n`. Indentation is spaces: a line indented with a tab is an error.
/// - A key written again (keys compare case-insensitively) replaces the earlier one: the last
///   wins, and its property takes the place of the last one written.
///
/// Values:
/// - Plain scalars are typed: `true`/`false` in any case → `.bool` (YAML 1.2 core: `yes`, `no`,
///   `on`, `off` are text); decimal numbers (`3`, `-2.5`, `.5`, `+1`, `1e3`, `007`) → `.number`
///   (hex, octal, `.inf` and `.nan` are text, and so is a number too large for a `Double`);
///   `2026-12-10` → `.date` at midnight UTC; `2026-12-10T09:30`, `2026-12-10 09:30`,
///   `2026-12-10T09:30:00`, `…:00.250`, each optionally followed by `Z` or an offset (`+01:00`,
///   `+0100`, `+01`, one space allowed before it) → `.date`, UTC when no zone is written; an
///   invalid date (`2026-02-30`) is text. `null`, `~` (`null` in any case) and an empty value →
///   `.text("")`. Anything else → `.text` as written, the comment and surrounding blanks removed.
/// - A plain scalar may go on over more-indented lines: they are joined with single spaces before
///   the value is typed (`key:` followed by an indented value is the same).
/// - Quoted scalars are always text, never numbers or dates: double quotes with YAML escapes (`\"`,
///   `\\`, `\/`, `\n`, `\t`, `\r`, `\0`, `\a`, `\b`, `\e`, `\f`, `\v`, a backslash-escaped space,
///   `\N`, `\_`, `\L`, `\P`, `\xXX`, `\uXXXX`, `\UXXXXXXXX`; any other escape is an error);
///   single quotes with `''` for `'`. A quoted scalar must end on its line.
/// - Lists → `.list` of the items as text (numbers and dates kept as written, quotes removed):
///   flow (`[a, b, "c, d"]`, on one line, empty items skipped) or block (`key:` then lines `- a`,
///   indented or not, every item at the same indentation; `-` alone is an empty item `""`).
/// - Block scalars: `|` keeps the lines' breaks, `>` joins lines with spaces (an empty line gives a
///   line break); the content's indentation (that of its first non-blank line) is removed; the text
///   never ends with a line break (chomping indicators `-` and `+` are accepted and do not change
///   that; an indentation indicator such as `|2` is an error).
///
/// Errors (the first one is in `error`, as `line N: …` or `line N: \`key\`: …`; the key it
/// concerns is left out of `properties`, its other lines are skipped, and the other keys still read):
/// - anchors `&a` and aliases `*a` ("anchors and aliases are not supported": nothing can expand, so
///   a YAML bomb costs its own size), explicit tags (`!!str`);
/// - nested maps (an indented `k: v` under a key or a list item, `{…}`) and nested lists (`- - a`,
///   `- [a]`, `[a, [b]]`); a plain value holding `: ` (quote it); a list item on its key's line
///   (`key: - a`), an item going on over several lines, items that do not line up;
/// - a quoted scalar or a flow list that does not end on its line, text after one, an unknown
///   escape, an indentation indicator (`|2`), an indented line after a quoted scalar or flow list;
/// - a line that is not `key: value`, an empty key, a complex key (`? k`), a key that is a list or
///   map, a value starting with `@` or a backquote, a list item or indented line that belongs to no
///   key, a line indented with a tab (it fails the key whose value it would continue).
/// - Limits: more than 10,000 keys (counting repeats; reading stops there), a list of more than
///   100,000 items, and a single scalar (a key, a value, a list item, a block scalar or a plain
///   scalar over several lines) over 64 KiB.
///
/// Tags: the values of the keys `tags` and `tag` (any case) are lists: the items of a flow or block
/// list, or a scalar split at commas and blanks (`tags: a, b` or `tags: a b`). One leading `#` of
/// an entry is removed; empty entries are dropped. Every entry is in the property's `.list`; each
/// that is a tag name (letters, digits, `_`, `-`, `/`) is also in `tags`, with the range of its
/// bytes in the whole note (`#` and quotes excluded), so that a rename can replace them. An entry
/// written with escapes in double quotes has no such range and is not in `tags`. A repeated
/// `tags:` replaces the earlier one's tags too.
///
/// The text is a `String`: bytes that were not UTF-8 were replaced (U+FFFD) when it was made, and
/// ranges count the bytes of that string's UTF-8.
public struct FrontMatter: Sendable, Hashable {
    /// The properties in the order written (a key written again: the last wins).
    public var properties: [Property]
    /// The entries of `tags:` and `tag:` that are tag names, in the order written.
    public var tags: [NoteTag]
    /// Why (part of) the front matter could not be read, `line N: …`; nil when all of it was read.
    public var error: String?

    public init(properties: [Property] = [], tags: [NoteTag] = [], error: String? = nil) {
        self.properties = properties
        self.tags = tags
        self.error = error
    }

    /// The note's front matter; nil when the note has none (or its block is too big to be one).
    public static func parse(_ text: String) -> FrontMatter? {
        guard let ranges = FrontMatterBlock.ranges(in: text) else { return nil }
        var parser = FrontMatterParser(bytes: Array(text.utf8.prefix(ranges.block.upperBound)))
        return parser.parse(ranges.yaml)
    }

    /// The value of the property whose key equals `key`, ignoring case.
    public subscript(key: String) -> PropertyValue? {
        let wanted = key.lowercased()
        return properties.last { $0.key.lowercased() == wanted }?.value
    }
}

/// One property of a note's front matter.
public struct Property: Sendable, Hashable {
    /// The key as written (quotes removed).
    public var key: String
    public var value: PropertyValue
    /// The line of its key, from 1 in the whole note.
    public var line: Int

    public init(key: String, value: PropertyValue, line: Int) {
        self.key = key
        self.value = value
        self.line = line
    }
}

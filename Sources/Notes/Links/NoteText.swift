/// The links and tags in a note's markdown text, in text order.
public struct ScannedText: Sendable, Hashable {
    /// Wiki links, embeds, and markdown links and images with a destination that is no URL.
    public var links: [NoteLink]
    /// `#tag`s of the text (not the front matter's `tags:`, which the property parser reads).
    public var tags: [NoteTag]

    public init(links: [NoteLink], tags: [NoteTag]) {
        self.links = links
        self.tags = tags
    }
}

/// Finds the links and tags in a note's markdown text, by Obsidian's rules (CommonMark where
/// Obsidian follows it). Pure: it reads the text only; resolving a target to a note is the
/// resolver's work. Ranges are UTF-8 byte offsets into the text; lines count from 1 (`\n` ends a
/// line).
///
/// **Not text.** Nothing is found in:
/// - the front matter block (`FrontMatterBlock.ranges(in:)`'s `block`);
/// - fenced code blocks: a line of 0–3 spaces and then 3 or more `` ` `` or `~` (a backtick fence's
///   info string holds no backtick) opens one; a line of 0–3 spaces, at least as many of the same
///   character and nothing else but spaces and tabs closes it; an unclosed one runs to the end of
///   the text. Fences indented 4 or more spaces (in list items) or inside block quotes are not
///   recognised, and indented code blocks are ordinary text;
/// - code spans: a run of N backticks opens one that closes with the next run of exactly N
///   backticks in the same paragraph (a paragraph ends at a blank line or a fence line); without
///   such a run the backticks are text. A run right after `\` opens with its first backtick escaped;
/// - HTML comments: `<!--` up to the next `-->` (which may be lines later); without a `-->` after
///   it, `<!--` is text;
/// - the inside of a wiki link, and a markdown link's destination and title (URLs' too).
///
/// Whichever of these starts first wins (a `<!--` inside a code span is code, a backtick inside a
/// comment is comment). `\` before an ASCII punctuation character makes it text: `\[` opens no
/// link, `` \` `` no code span, `\#` no tag.
///
/// **Wiki links.** `[[inner]]` on one line: the inner text is what lies between `[[` and the first
/// `]]` after it; it holds no `[[` (in `[[a [[b]]` only `[[b]]` is a link) and is not empty or
/// only spaces and tabs. `![[inner]]` is an embed (`isEmbed`). The target is the inner text
/// before the first `#` or `|`, without leading and trailing spaces and tabs, and `targetRange`
/// covers exactly those bytes (at the `#` or `|` when the target is empty, as in `[[#Heading]]`),
/// so replacing them keeps `#heading|shown`. The heading is what lies between the first `#` and
/// the first `|` after it (or the end), trimmed the same way; nil without a `#` (`[[a#]]`
/// gives `""`). The shown text is everything after the first `|`, as written; nil without `|`.
/// A `\` right before that `|` (a wiki link in a table cell) belongs to neither side.
///
/// **Markdown links.** `[text](destination)` and `![alt](destination)` (an image, `isEmbed`), with
/// an optional title: `[text](destination "title")`, `'title'` or `(title)`. Brackets pair as
/// CommonMark pairs them (the innermost `[` before a `]`; a link contains no link, so the `[`s
/// around one open none; an image may contain a link; the bracketed text may span lines, not a
/// blank line or a fence). The destination is `<…>` (no line end, no unescaped `<` or `>` inside;
/// `targetRange` is inside the brackets) or a run of characters other than spaces and control
/// characters, in which parentheses must balance (nested at most 32 deep, cmark's bound), such as
/// `a(b).md`. Destination and title are on the line of `](`; spaces and tabs may
/// surround them. The shown text is the bracketed text, as written. The target is the destination
/// before its first unescaped `#`, with backslash escapes undone and then percent-escapes decoded
/// (`%20` is a space; an invalid escape, or bytes that decode to invalid UTF-8, stay as written);
/// the heading is what follows that `#`, decoded the same way; `targetRange` covers the raw
/// target bytes. Not reported: a destination with a URL scheme (it matches
/// `^[A-Za-z][A-Za-z0-9+.-]*:`, as `https:`, `mailto:`, `obsidian:`), and an empty destination or
/// one that is only `#`. A destination that is only `#Heading` links to a heading of the same note
/// (target `""`). Others, `/x` and `//x` included, are reported as written: the resolver decides.
/// Reference-style links (`[text][ref]`, `[ref]` with a `[ref]: destination` line) and autolinks
/// (`<https://…>`) are not reported.
///
/// **Tags.** A `#` opens a tag at the start of a line or right after whitespace or one of
/// `( [ { , ; " ' * ~ > |` (so not in `a#b`, `x.md#h` or `http://x/#frag`, nor after `\`). The name
/// is the longest run after it of letters, combining marks, digits (Unicode categories L, M, Nd),
/// `_`, `-` and `/`, without trailing `/`s. It is a tag when it is not empty, holds at least one
/// character that is not a digit (`#123` is none, `#1a` is one) and is at most 512 bytes long (a
/// longer run is no tag). So `# Heading` and `## Heading` are no tags. Emoji are no name
/// characters. Tags in a link's bracketed text count; tags in a wiki link or a destination do not.
/// `NoteTag.range` covers the name, not the `#`; `inFrontMatter` is false.
///
/// **Bounds.** The work is linear in the length of the text, whatever it holds: every look-ahead
/// remembers where it stopped, and nothing recurses.
public enum NoteText {
    /// The links and tags in `text`, each list in text order.
    public static func scan(_ text: String) -> ScannedText {
        let start = FrontMatterBlock.ranges(in: text)?.block.upperBound ?? 0
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            var scanner = NoteTextScanner(bytes: buffer)
            scanner.scan(from: start)
            scanner.links.sort { $0.range.lowerBound < $1.range.lowerBound }
            return ScannedText(links: scanner.links, tags: scanner.tags)
        }
    }
}

import Foundation

/// A link in a note's text, as written: a wiki link (`[[Title]]`, `[[Folder/Title#Heading|shown]]`,
/// `![[image.png]]`) or a markdown link or image with a relative destination (`[x](Other.md)`,
/// `[x](../Work/Plan%20B.md)`, `![](pic.png)`). URLs (a destination with a scheme) are no links
/// to notes and are not reported. Ranges are UTF-8 byte offsets into the text that was scanned,
/// so that a rewrite can replace exactly the part it changes.
public struct NoteLink: Sendable, Hashable {
    public enum Style: Sendable, Hashable {
        /// `[[target#heading|shown]]` (an embed: `![[…]]`).
        case wiki
        /// `[shown](destination#heading)` (an image: `![shown](…)`).
        case markdown
    }

    public var style: Style
    /// `![[…]]` or `![…](…)`.
    public var isEmbed: Bool
    /// The whole link, `!` included.
    public var range: Range<Int>
    /// The destination as written, without its heading: for a wiki link the text before `#` and
    /// `|`; for a markdown link the raw destination (percent-encoded, or inside `<…>` with the
    /// brackets excluded), before its `#`. Empty for a link to a heading of the same note.
    public var targetRange: Range<Int>
    /// The destination, decoded (markdown: percent-decoding undone), without the heading:
    /// `Folder/Title`, `../Work/Plan B.md`, `pic.png`; empty for `[[#Heading]]`.
    public var target: String
    /// What follows the first `#` of the destination (`Heading`, `^block`); nil when none.
    public var heading: String?
    /// The wiki link's text after `|`, or the markdown link's bracketed text; nil for a wiki link
    /// without `|`.
    public var shownText: String?
    /// The line it starts on, from 1.
    public var line: Int

    public init(
        style: Style, isEmbed: Bool, range: Range<Int>, targetRange: Range<Int>, target: String, heading: String?, shownText: String?,
        line: Int
    ) {
        self.style = style
        self.isEmbed = isEmbed
        self.range = range
        self.targetRange = targetRange
        self.target = target
        self.heading = heading
        self.shownText = shownText
        self.line = line
    }
}

/// A tag: `#tag` or `#nested/tag` in the text, or an entry of the front matter's `tags:`.
public struct NoteTag: Sendable, Hashable {
    /// The tag as written, without `#` (case kept: tags compare case-insensitively).
    public var name: String
    /// The name's bytes in the text (after the `#`; in front matter, the entry's value).
    public var range: Range<Int>
    /// An entry of the front matter's `tags:` rather than `#tag` in the text.
    public var inFrontMatter: Bool
    /// The line it is on, from 1.
    public var line: Int

    public init(name: String, range: Range<Int>, inFrontMatter: Bool, line: Int) {
        self.name = name
        self.range = range
        self.inFrontMatter = inFrontMatter
        self.line = line
    }
}

/// The value of one front-matter property.
public enum PropertyValue: Sendable, Hashable {
    case text(String)
    case number(Double)
    case bool(Bool)
    /// A date (`2026-12-10`, midnight UTC) or date and time (`2026-12-10T09:30`, `…Z`, `…+01:00`).
    case date(Date)
    case list([String])
}

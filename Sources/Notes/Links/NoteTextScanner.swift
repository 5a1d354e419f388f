/// One pass over a note's UTF-8 bytes that collects its links and tags by `NoteText`'s rules.
/// Each look-ahead (a closing `]]`, `-->`, backtick run or fence) remembers where it stopped, so
/// that the pass stays linear on hostile input; nothing recurses.
struct NoteTextScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var links: [NoteLink] = []
    var tags: [NoteTag] = []
    var lines = LineCounter()
    /// The `[` and `![` that may still open a markdown link, innermost last.
    var openers: [BracketOpener] = []
    /// Openers below this index that are not images open no link any more: they contain one.
    var firstActiveOpener = 0
    var wikiClose = NextPairOnLine(first: UInt8(ascii: "]"), second: UInt8(ascii: "]"))
    var wikiOpen = NextPairOnLine(first: UInt8(ascii: "["), second: UInt8(ascii: "["))
    /// Set once a search for `-->` reached the end of the text: no later `<!--` is a comment.
    var commentsHaveNoEnd = false
    var backtickRuns = BacktickRuns()

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Scans from `start` (the end of the front matter) to the end of the text.
    mutating func scan(from start: Int) {
        var index = start
        var atLineStart = true
        while index < bytes.count {
            if atLineStart {
                atLineStart = false
                if let next = lineBegins(at: index) {
                    index = next
                    atLineStart = true
                    continue
                }
            }
            let byte = bytes[index]
            // Most bytes are none of `\n ! # < [ \ ] ``: letters, digits, most punctuation, non-ASCII.
            if byte > 0x60 || (byte > 0x23 && byte < 0x5B && byte != 0x3C) {
                index += 1
                continue
            }
            switch byte {
            case MarkdownByte.newline:
                index += 1
                atLineStart = true
            case MarkdownByte.backslash:
                index += index + 1 < bytes.count && MarkdownByte.isASCIIPunctuation(bytes[index + 1]) ? 2 : 1
            case MarkdownByte.backtick:
                index = codeSpan(at: index)
            case MarkdownByte.openBracket:
                index = openBracket(at: index, bracket: index)
            case MarkdownByte.exclamation where index + 1 < bytes.count && bytes[index + 1] == MarkdownByte.openBracket:
                index = openBracket(at: index, bracket: index + 1)
            case MarkdownByte.closeBracket:
                index = closeBracket(at: index)
            case MarkdownByte.lessThan:
                index = comment(at: index) ?? index + 1
            case MarkdownByte.hash:
                index = tag(at: index)
            default:
                index += 1
            }
        }
    }

    /// At the start of a line: a blank line or a fence ends the paragraph (no `[` before it opens a
    /// link after it). Returns where a fenced code block ends, nil when the line is not a fence.
    private mutating func lineBegins(at start: Int) -> Int? {
        if isBlankLine(at: start) {
            openers.removeAll(keepingCapacity: true)
            firstActiveOpener = 0
            return nil
        }
        guard let fence = fenceOpening(at: start) else { return nil }
        openers.removeAll(keepingCapacity: true)
        firstActiveOpener = 0
        return fenceEnd(after: start, fence: fence)
    }

    /// Where the line that `index` is on ends (at its `\n`, or the end of the text).
    func lineEnd(from index: Int) -> Int {
        var end = index
        while end < bytes.count && bytes[end] != MarkdownByte.newline { end += 1 }
        return end
    }

    /// Whether the line starting at `start` holds only spaces, tabs and `\r`.
    func isBlankLine(at start: Int) -> Bool {
        var index = start
        while index < bytes.count {
            switch bytes[index] {
            case MarkdownByte.newline: return true
            case MarkdownByte.space, MarkdownByte.tab, MarkdownByte.carriageReturn: index += 1
            default: return false
            }
        }
        return true
    }
}

extension NoteTextScanner {
    /// A `[` or `![` that may open a markdown link.
    struct BracketOpener {
        /// Where the link would start (at the `!` of an image).
        var start: Int
        /// Where the bracketed text starts.
        var textStart: Int
        var isImage: Bool
        var line: Int
    }

    /// The line of a byte offset, counted from the last one asked for (offsets asked for mostly grow,
    /// so counting the whole text costs one pass).
    struct LineCounter {
        private var offset = 0
        private var line = 1

        mutating func line(at target: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
            while offset < target {
                if bytes[offset] == MarkdownByte.newline { line += 1 }
                offset += 1
            }
            while offset > target {
                offset -= 1
                if bytes[offset] == MarkdownByte.newline { line -= 1 }
            }
            return line
        }
    }

    /// The first offset at or after a start where two given bytes follow each other, or where the line
    /// ends (or the text does). The answer is kept: asking again from a later start that is not past
    /// it costs nothing, so that many starts on one line cost one pass over it.
    struct NextPairOnLine {
        let first: UInt8
        let second: UInt8
        private var searchedFrom = Int.max
        private var found = 0

        init(first: UInt8, second: UInt8) {
            self.first = first
            self.second = second
        }

        mutating func find(from start: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
            if start >= searchedFrom && start <= found { return found }
            var index = start
            while index < bytes.count {
                let byte = bytes[index]
                if byte == MarkdownByte.newline || (byte == first && index + 1 < bytes.count && bytes[index + 1] == second) { break }
                index += 1
            }
            searchedFrom = start
            found = min(index, bytes.count)
            return found
        }
    }
}

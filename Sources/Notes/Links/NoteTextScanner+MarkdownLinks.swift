/// `[text](destination "title")` and `![alt](destination)`: the `]` that may close one.
extension NoteTextScanner {
    /// The `]` at `close`: a markdown link or image when the innermost opener is active and
    /// `(destination)` follows. Returns where scanning goes on.
    mutating func closeBracket(at close: Int) -> Int {
        guard let opener = openers.popLast() else { return close + 1 }
        guard opener.isImage || openers.count >= firstActiveOpener else { return close + 1 }
        guard close + 1 < bytes.count, bytes[close + 1] == MarkdownByte.openParenthesis,
            let tail = inlineDestination(from: close + 2)
        else { return close + 1 }
        // A link contains no link: the `[`s around this one open none.
        if !opener.isImage { firstActiveOpener = openers.count }
        reportMarkdownLink(opener: opener, textEnd: close, destination: tail.destination, end: tail.end)
        return tail.end
    }

    /// Records the link when its destination may name a note: not empty, not only `#`, no URL.
    private mutating func reportMarkdownLink(opener: BracketOpener, textEnd: Int, destination: Range<Int>, end: Int) {
        guard !hasScheme(destination) else { return }
        var hash: Int?
        var index = destination.lowerBound
        while index < destination.upperBound {
            if bytes[index] == MarkdownByte.hash {
                hash = index
                break
            }
            index += bytes[index] == MarkdownByte.backslash ? 2 : 1
        }
        let targetRange = destination.lowerBound..<(hash ?? destination.upperBound)
        guard !targetRange.isEmpty || (hash.map { $0 + 1 < destination.upperBound } ?? false) else { return }
        let heading = hash.map { MarkdownByte.decodedDestination($0 + 1..<destination.upperBound, in: bytes) }
        links.append(
            NoteLink(
                style: .markdown, isEmbed: opener.isImage, range: opener.start..<end, targetRange: targetRange,
                target: MarkdownByte.decodedDestination(targetRange, in: bytes), heading: heading,
                shownText: text(opener.textStart..<textEnd), line: opener.line))
    }

    /// Whether the destination starts with a URL scheme: `^[A-Za-z][A-Za-z0-9+.-]*:`.
    private func hasScheme(_ destination: Range<Int>) -> Bool {
        guard let first = destination.first, MarkdownByte.isASCIILetter(bytes[first]) else { return false }
        for index in destination.dropFirst() {
            let byte = bytes[index]
            if byte == UInt8(ascii: ":") { return true }
            guard
                MarkdownByte.isASCIILetter(byte) || MarkdownByte.isASCIIDigit(byte) || byte == UInt8(ascii: "+")
                    || byte == UInt8(ascii: ".")
                    || byte == UInt8(ascii: "-")
            else { return false }
        }
        return false
    }

    /// What follows `](`, from `start`: spaces and tabs, a destination, optionally spaces or tabs
    /// and a title, spaces and tabs, `)`, all on one line. Returns the destination's bytes
    /// (inside `<…>`) and the offset after the `)`; nil when that is not there.
    private func inlineDestination(from start: Int) -> (destination: Range<Int>, end: Int)? {
        var index = skipSpacesAndTabs(from: start)
        let destination: Range<Int>
        if index < bytes.count && bytes[index] == MarkdownByte.lessThan {
            guard let closing = angleDestinationEnd(from: index + 1) else { return nil }
            destination = index + 1..<closing
            index = closing + 1
        } else {
            guard let end = bareDestinationEnd(from: index) else { return nil }
            destination = index..<end
            index = end
        }
        let afterDestination = index
        index = skipSpacesAndTabs(from: index)
        if index < bytes.count && bytes[index] != MarkdownByte.closeParenthesis && index > afterDestination {
            guard let titleEnd = titleEnd(from: index) else { return nil }
            index = skipSpacesAndTabs(from: titleEnd)
        }
        guard index < bytes.count && bytes[index] == MarkdownByte.closeParenthesis else { return nil }
        return (destination, index + 1)
    }

    /// The `>` that closes a `<…>` destination whose text starts at `start`: none before a line
    /// end or an unescaped `<`. (Each search stops at the next `<`, so searches do not overlap.)
    private func angleDestinationEnd(from start: Int) -> Int? {
        var index = start
        while index < bytes.count {
            switch bytes[index] {
            case MarkdownByte.newline, MarkdownByte.lessThan: return nil
            case MarkdownByte.greaterThan: return index
            case MarkdownByte.backslash: index += 2
            default: index += 1
            }
        }
        return nil
    }

    /// The end of a bare destination from `start`: before the first space or control character,
    /// or at the `)` that would leave its parentheses unbalanced. Parentheses nest at most 32 deep
    /// (as in cmark): at any offset at most 33 searches are still going, which keeps the scan
    /// linear. Nil when the parentheses do not balance.
    private func bareDestinationEnd(from start: Int) -> Int? {
        var index = start
        var depth = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte <= MarkdownByte.space || byte == 0x7F { break }
            if byte == MarkdownByte.backslash && index + 1 < bytes.count && MarkdownByte.isASCIIPunctuation(bytes[index + 1]) {
                index += 2
                continue
            }
            if byte == MarkdownByte.openParenthesis {
                depth += 1
                if depth > 32 { return nil }
            } else if byte == MarkdownByte.closeParenthesis {
                if depth == 0 { break }
                depth -= 1
            }
            index += 1
        }
        return depth == 0 ? index : nil
    }

    /// The end (after the closing delimiter) of a title `"…"`, `'…'` or `(…)` that starts at
    /// `start`, on its line; nil when there is none. (Each search stops at the next delimiter of
    /// its kind, so searches of one kind do not overlap.)
    private func titleEnd(from start: Int) -> Int? {
        let opening = bytes[start]
        let closing: UInt8
        switch opening {
        case UInt8(ascii: "\""), UInt8(ascii: "'"): closing = opening
        case MarkdownByte.openParenthesis: closing = MarkdownByte.closeParenthesis
        default: return nil
        }
        var index = start + 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == MarkdownByte.newline || (opening == MarkdownByte.openParenthesis && byte == opening) { return nil }
            if byte == closing { return index + 1 }
            index += byte == MarkdownByte.backslash ? 2 : 1
        }
        return nil
    }

    private func skipSpacesAndTabs(from start: Int) -> Int {
        var index = start
        while index < bytes.count && MarkdownByte.isSpaceOrTab(bytes[index]) { index += 1 }
        return index
    }
}

/// `[[target#heading|shown]]` and `![[…]]`, and the `[` that opens a markdown link or image.
extension NoteTextScanner {
    /// A `[` at `bracket` (after a `!` at `start` for an embed or image): a wiki link when one is
    /// there, otherwise an opener of a markdown link. Returns where scanning goes on.
    mutating func openBracket(at start: Int, bracket: Int) -> Int {
        if let end = wikiLink(at: start, bracket: bracket) { return end }
        if firstActiveOpener > openers.count { firstActiveOpener = openers.count }
        let line = lines.line(at: start, in: bytes)
        openers.append(BracketOpener(start: start, textStart: bracket + 1, isImage: start != bracket, line: line))
        return bracket + 1
    }

    /// The wiki link whose `[[` is at `bracket` (`![[` at `start` for an embed): records it and
    /// returns where it ends; nil when there is none.
    private mutating func wikiLink(at start: Int, bracket: Int) -> Int? {
        guard bracket + 1 < bytes.count, bytes[bracket + 1] == MarkdownByte.openBracket else { return nil }
        let close = wikiClose.find(from: bracket + 2, in: bytes)
        guard close < bytes.count, bytes[close] == MarkdownByte.closeBracket else { return nil }
        // A later `[[` before the `]]` starts the link instead.
        guard wikiOpen.find(from: bracket + 1, in: bytes) >= close else { return nil }
        let inner = bracket + 2..<close
        guard inner.contains(where: { !MarkdownByte.isSpaceOrTab(bytes[$0]) }) else { return nil }

        let pipe = inner.first { bytes[$0] == MarkdownByte.pipe }
        let beforePipe = inner.lowerBound..<(pipe ?? inner.upperBound)
        let hash = beforePipe.first { bytes[$0] == MarkdownByte.hash }
        // `[[a\|b]]` in a table cell: the `\` escapes the `|` for the table, and belongs to no part.
        var partsEnd = beforePipe.upperBound
        if pipe != nil && partsEnd > beforePipe.lowerBound && bytes[partsEnd - 1] == MarkdownByte.backslash { partsEnd -= 1 }
        let targetRange = trimmed(beforePipe.lowerBound..<(hash ?? partsEnd))
        let heading = hash.map { text(trimmed($0 + 1..<max($0 + 1, partsEnd))) }
        let shownText = pipe.map { text($0 + 1..<inner.upperBound) }
        let line = lines.line(at: start, in: bytes)
        links.append(
            NoteLink(
                style: .wiki, isEmbed: start != bracket, range: start..<close + 2, targetRange: targetRange, target: text(targetRange),
                heading: heading, shownText: shownText, line: line))
        return close + 2
    }

    /// `range` without leading and trailing spaces and tabs (empty at its end when it holds only those).
    func trimmed(_ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while upper > lower && MarkdownByte.isSpaceOrTab(bytes[upper - 1]) { upper -= 1 }
        while lower < upper && MarkdownByte.isSpaceOrTab(bytes[lower]) { lower += 1 }
        return lower == upper ? range.upperBound..<range.upperBound : lower..<upper
    }

    func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}

/// What is no text for the scanner: fenced code blocks, code spans and HTML comments.
extension NoteTextScanner {
    /// The fence that opens a code block on the line starting at `start`: 0–3 spaces, then 3 or
    /// more `` ` `` or `~` (a backtick fence's info string holds no backtick); nil when none.
    func fenceOpening(at start: Int) -> (marker: UInt8, length: Int)? {
        guard let fence = fenceRun(at: start) else { return nil }
        if fence.marker == MarkdownByte.backtick {
            var index = fence.end
            while index < bytes.count && bytes[index] != MarkdownByte.newline {
                if bytes[index] == MarkdownByte.backtick { return nil }
                index += 1
            }
        }
        return (fence.marker, fence.end - fence.start)
    }

    /// Where the code block whose fence line starts at `start` ends: the start of the line after
    /// its closing fence (0–3 spaces, at least as many of the same character, then only spaces and
    /// tabs), or the end of the text.
    func fenceEnd(after start: Int, fence: (marker: UInt8, length: Int)) -> Int {
        var lineStart = lineEnd(from: start) + 1
        while lineStart < bytes.count {
            let end = lineEnd(from: lineStart)
            if let run = fenceRun(at: lineStart), run.marker == fence.marker, run.end - run.start >= fence.length,
                isBlankLine(at: run.end)
            {
                return min(end + 1, bytes.count)
            }
            lineStart = end + 1
        }
        return bytes.count
    }

    /// A run of 3 or more `` ` `` or `~` after 0–3 spaces at the start of a line.
    private func fenceRun(at lineStart: Int) -> (marker: UInt8, start: Int, end: Int)? {
        var start = lineStart
        while start < bytes.count && start - lineStart < 3 && bytes[start] == MarkdownByte.space { start += 1 }
        guard start < bytes.count, bytes[start] == MarkdownByte.backtick || bytes[start] == MarkdownByte.tilde else { return nil }
        let marker = bytes[start]
        var end = start
        while end < bytes.count && bytes[end] == marker { end += 1 }
        return end - start >= 3 ? (marker, start, end) : nil
    }

    /// Where a paragraph that holds `index` ends: at the start of the next line that is blank or a
    /// fence, or at the end of the text.
    func paragraphEnd(after index: Int) -> Int {
        var lineStart = lineEnd(from: index) + 1
        while lineStart < bytes.count {
            if isBlankLine(at: lineStart) || fenceOpening(at: lineStart) != nil { return lineStart }
            lineStart = lineEnd(from: lineStart) + 1
        }
        return bytes.count
    }

    /// The backtick run at `start`: a code span when the same paragraph has a later run of exactly
    /// as many backticks. Returns where scanning goes on: after the span, or after the run.
    mutating func codeSpan(at start: Int) -> Int {
        var end = start
        while end < bytes.count && bytes[end] == MarkdownByte.backtick { end += 1 }
        if !backtickRuns.covered.contains(start) {
            backtickRuns = BacktickRuns(from: start, to: paragraphEnd(after: start), in: bytes)
        }
        guard let closing = backtickRuns.nextRun(ofLength: end - start, after: start) else { return end }
        return closing + (end - start)
    }

    /// The HTML comment that starts at `start` (`<!--` up to the next `-->`): returns where it
    /// ends, nil when there is none.
    mutating func comment(at start: Int) -> Int? {
        guard !commentsHaveNoEnd, start + 3 < bytes.count, bytes[start + 1] == MarkdownByte.exclamation,
            bytes[start + 2] == UInt8(ascii: "-"), bytes[start + 3] == UInt8(ascii: "-")
        else { return nil }
        var index = start + 2  // `<!-->` and `<!--->` are comments too
        while index + 2 < bytes.count {
            if bytes[index] == UInt8(ascii: "-") && bytes[index + 1] == UInt8(ascii: "-") && bytes[index + 2] == MarkdownByte.greaterThan {
                return index + 3
            }
            index += 1
        }
        commentsHaveNoEnd = true
        return nil
    }
}

extension NoteTextScanner {
    /// The backtick runs of one paragraph, by length: where a code span closes. Openers are met in text
    /// order, so a cursor per length only moves forward.
    struct BacktickRuns {
        /// The bytes whose runs are listed.
        private(set) var covered: Range<Int> = 0..<0
        private var starts: [Int: [Int]] = [:]
        private var cursors: [Int: Int] = [:]

        init() {}

        init(from start: Int, to end: Int, in bytes: UnsafeBufferPointer<UInt8>) {
            covered = start..<end
            var index = start
            while index < end {
                guard bytes[index] == MarkdownByte.backtick else {
                    index += 1
                    continue
                }
                var runEnd = index
                while runEnd < end && bytes[runEnd] == MarkdownByte.backtick { runEnd += 1 }
                starts[runEnd - index, default: []].append(index)
                index = runEnd
            }
        }

        /// The start of the first run of exactly `length` backticks that starts after `index`.
        mutating func nextRun(ofLength length: Int, after index: Int) -> Int? {
            guard let runs = starts[length] else { return nil }
            var cursor = cursors[length, default: 0]
            while cursor < runs.count && runs[cursor] <= index { cursor += 1 }
            cursors[length] = cursor
            return cursor < runs.count ? runs[cursor] : nil
        }
    }
}

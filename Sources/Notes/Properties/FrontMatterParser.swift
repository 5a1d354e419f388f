/// Reads the YAML of a front matter block line by line: one pass, no recursion, each line read once;
/// the value of the key being read stays open while indented lines (a block list, a block scalar,
/// a plain scalar going on) add to it.
struct FrontMatterParser {
    static let maximumProperties = 10_000

    /// The key whose value is being read.
    private struct OpenKey {
        enum Kind {
            case pending
            case blockList
            case plain
            case quoted
            case flowList
            case blockScalar(folded: Bool)
            /// Its value is wrong (the error says why): its indented lines are skipped.
            case failed
        }

        var key: String
        var line: Int
        var isTags: Bool
        var kind: Kind = .pending
        /// The value's parts: a list's items, a scalar's lines.
        var segments: [FrontMatterSegment] = []
        /// The indentation of a block list's items or a block scalar's lines.
        var indent: Int?
        /// The bytes of a scalar read over several lines.
        var byteCount = 0
    }

    /// The note's bytes up to the end of the block.
    let bytes: [UInt8]
    /// The properties, a key written again leaving a hole where it was first.
    private var slots: [Property?] = []
    private var slotByKey: [String: Int] = [:]
    private var tagsBySlot: [Int: [NoteTag]] = [:]
    private var keyCount = 0
    private var error: String?
    private var open: OpenKey?

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func parse(_ yaml: Range<Int>) -> FrontMatter {
        var start = yaml.lowerBound
        var line = 2
        while start < yaml.upperBound, keyCount <= Self.maximumProperties {
            var end = start
            while end < yaml.upperBound, bytes[end] != ascii("\n") { end += 1 }
            let next = end < yaml.upperBound ? end + 1 : end
            if end > start, bytes[end - 1] == ascii("\r") { end -= 1 }
            read(start..<end, line: line)
            start = next
            line += 1
        }
        close()
        let tags = tagsBySlot.keys.sorted().flatMap { tagsBySlot[$0]! }
        return FrontMatter(properties: slots.compactMap { $0 }, tags: tags, error: error)
    }

    private mutating func read(_ range: Range<Int>, line: Int) {
        var start = range.lowerBound
        while start < range.upperBound, bytes[start] == ascii(" ") { start += 1 }
        let indent = start - range.lowerBound
        if case .blockScalar = open?.kind {
            if readBlockScalarLine(range, indent: indent, content: start, line: line) { return }
        }
        var content = start
        while content < range.upperBound, isBlank(bytes[content]) { content += 1 }
        guard content < range.upperBound, bytes[content] != ascii("#") else { return }  // blank, or a comment
        guard content == start else { return fail("a tab indents this line (YAML indents with spaces only)", line: line) }
        let isItem = bytes[start] == ascii("-") && (start + 1 == range.upperBound || isBlank(bytes[start + 1]))
        if indent == 0, !isItem {
            close()
            readKey(start..<range.upperBound, line: line)
        } else {
            readIndented(start..<range.upperBound, indent: indent, isItem: isItem, line: line)
        }
    }

    private mutating func readKey(_ range: Range<Int>, line: Int) {
        keyCount += 1
        guard keyCount <= Self.maximumProperties else {
            return report("more than 10,000 properties: the rest is not read", line: line)
        }
        let key: String
        let valueStart: Int
        do {
            (key, valueStart) = try FrontMatterSyntax(bytes: bytes, line: line).key(range.lowerBound, range.upperBound)
        } catch {
            return report(error.message, line: line)
        }
        let lowercased = key.lowercased()
        open = OpenKey(key: key, line: line, isTags: lowercased == "tags" || lowercased == "tag")
        startValue(valueStart..<range.upperBound, onKeyLine: true, line: line)
    }

    /// The value on its key's line, or on the line after `key:`.
    private mutating func startValue(_ range: Range<Int>, onKeyLine: Bool, line: Int) {
        do {
            switch try syntax(line).value(range.lowerBound, range.upperBound, inItem: false, allowsBlockScalar: onKeyLine) {
            case .empty: break
            case .plain(let segment, let hasMappingIndicator):
                guard !hasMappingIndicator else {
                    return fail(onKeyLine ? "a value holding `: ` must be quoted" : FrontMatterProblem.nestedMaps.message, line: line)
                }
                open?.kind = .plain
                open?.segments = [segment]
                open?.byteCount = segment.range.count
            case .quoted(let segment):
                open?.kind = .quoted
                open?.segments = [segment]
            case .flowList(let items):
                open?.kind = .flowList
                open?.segments = items
            case .blockScalar(let folded):
                open?.kind = .blockScalar(folded: folded)
            }
        } catch {
            fail(error.message, line: line)
        }
    }

    /// A line indented under a key (or a list item at indentation 0).
    private mutating func readIndented(_ range: Range<Int>, indent: Int, isItem: Bool, line: Int) {
        guard let kind = open?.kind else {
            return report(isItem ? "a list item that belongs to no key" : "an indented line that belongs to no key", line: line)
        }
        switch kind {
        case .failed, .blockScalar:
            return
        case .pending:
            if isItem {
                open?.kind = .blockList
                open?.indent = indent
                readItem(range, line: line)
            } else {
                startValue(range, onKeyLine: false, line: line)
            }
        case .blockList:
            if isItem, indent == open?.indent {
                readItem(range, line: line)
            } else if isItem {
                fail("its list items do not line up", line: line)
            } else {
                let plain = try? syntax(line).plain(range.lowerBound, range.upperBound)
                if case .plain(_, true) = plain { return fail(FrontMatterProblem.nestedMaps.message, line: line) }
                fail("a list item that goes on over several lines is not supported", line: line)
            }
        case .plain:
            guard !isItem else { return fail("a list item under a value", line: line) }
            do throws(FrontMatterProblem) {
                guard case .plain(let segment, let hasMappingIndicator) = try syntax(line).plain(range.lowerBound, range.upperBound) else {
                    return
                }
                guard !hasMappingIndicator else { return fail(FrontMatterProblem.nestedMaps.message, line: line) }
                open?.byteCount += segment.range.count + 1
                guard open!.byteCount <= FrontMatterSyntax.maximumScalarBytes else { throw FrontMatterProblem.tooLong }
                open?.segments.append(segment)
            } catch {
                fail(error.message, line: line)
            }
        case .quoted, .flowList:
            fail("the value goes on after its end", line: line)
        }
    }

    /// `- item` of a block list.
    private mutating func readItem(_ range: Range<Int>, line: Int) {
        do throws(FrontMatterProblem) {
            guard open!.segments.count < FrontMatterSyntax.maximumListItems else { throw FrontMatterProblem.tooManyItems }
            switch try syntax(line).value(range.lowerBound + 1, range.upperBound, inItem: true, allowsBlockScalar: false) {
            case .empty:
                open?.segments.append(
                    FrontMatterSegment(text: "", range: range.upperBound..<range.upperBound, line: line, isVerbatim: true))
            case .plain(let segment, let hasMappingIndicator):
                guard !hasMappingIndicator else { throw FrontMatterProblem.nestedMaps }
                open?.segments.append(segment)
            case .quoted(let segment):
                open?.segments.append(segment)
            case .flowList, .blockScalar:
                throw FrontMatterProblem.nestedLists
            }
        } catch {
            fail(error.message, line: line)
        }
    }

    /// A line of a block scalar: false when the line ends it (indentation 0, not blank).
    private mutating func readBlockScalarLine(_ range: Range<Int>, indent: Int, content: Int, line: Int) -> Bool {
        var end = content
        while end < range.upperBound, isBlank(bytes[end]) { end += 1 }
        let isBlankLine = end == range.upperBound
        guard isBlankLine || indent > 0 else {
            close()
            return false
        }
        var text = range.upperBound..<range.upperBound
        if !isBlankLine {
            let strip = min(indent, open?.indent ?? indent)
            open?.indent = strip
            text = range.lowerBound + strip..<range.upperBound
        }
        open?.byteCount += text.count + 1
        guard open!.byteCount <= FrontMatterSyntax.maximumScalarBytes else {
            fail(FrontMatterProblem.tooLong.message, line: line)
            return true
        }
        open?.segments.append(
            FrontMatterSegment(text: String(decoding: bytes[text], as: UTF8.self), range: text, line: line, isVerbatim: true))
        return true
    }

    /// The open key's value is complete: it becomes a property (and tags).
    private mutating func close() {
        guard let key = open else { return }
        open = nil
        let value: PropertyValue
        switch key.kind {
        case .failed: return
        case .pending: value = .text("")
        case .blockList, .flowList: value = .list(key.segments.map(\.text))
        case .plain: value = FrontMatterScalar.typed(key.segments.map(\.text).joined(separator: " "))
        case .quoted: value = .text(key.segments[0].text)
        case .blockScalar(let folded): value = .text(Self.blockText(key.segments.map(\.text), folded: folded))
        }
        var tags: [NoteTag] = []
        var property = Property(key: key.key, value: value, line: key.line)
        if key.isTags {
            let isList: Bool
            switch key.kind {
            case .blockList, .flowList: isList = true
            default: isList = false
            }
            let entries = FrontMatterTags.entries(key.segments, splitting: !isList)
            property.value = .list(entries.map(\.name))
            tags = entries.compactMap(\.tag)
        }
        let lowercased = key.key.lowercased()
        if let earlier = slotByKey[lowercased] {
            slots[earlier] = nil
            tagsBySlot[earlier] = nil
        }
        slotByKey[lowercased] = slots.count
        if !tags.isEmpty { tagsBySlot[slots.count] = tags }
        slots.append(property)
    }

    /// `|`: the lines with their breaks; `>`: lines joined with spaces, an empty line a break. No
    /// line break at the end.
    private static func blockText(_ lines: [String], folded: Bool) -> String {
        var text = ""
        if folded {
            var previousWasText = false
            for line in lines {
                if line.isEmpty {
                    text += "\n"
                } else {
                    if previousWasText { text += " " }
                    text += line
                }
                previousWasText = !line.isEmpty
            }
        } else {
            text = lines.joined(separator: "\n")
        }
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    private func syntax(_ line: Int) -> FrontMatterSyntax {
        FrontMatterSyntax(bytes: bytes, line: line, isTagValue: open?.isTags ?? false)
    }

    /// The open key's value cannot be read: the key is left out, and its other lines skipped.
    private mutating func fail(_ message: String, line: Int) {
        guard let key = open?.key else { return report(message, line: line) }
        report("`\(key)`: \(message)", line: line)
        open?.kind = .failed
        open?.segments = []
    }

    private mutating func report(_ message: String, line: Int) {
        if error == nil { error = "line \(line): \(message)" }
    }
}

private func ascii(_ character: Unicode.Scalar) -> UInt8 { UInt8(ascii: character) }
private func isBlank(_ byte: UInt8) -> Bool { byte == ascii(" ") || byte == ascii("\t") }

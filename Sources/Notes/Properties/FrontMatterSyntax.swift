/// A run of a front-matter value's text: what it says, where, and whether its bytes in the note are
/// exactly that text (no quotes' escapes), so that a rewrite may replace them.
struct FrontMatterSegment {
    var text: String
    var range: Range<Int>
    var line: Int
    var isVerbatim: Bool
}

/// Why a line's key or value cannot be read.
struct FrontMatterProblem: Error {
    var message: String
    init(_ message: String) { self.message = message }

    static let aliases = FrontMatterProblem("anchors and aliases are not supported (`&a`, `*a`)")
    static let explicitTags = FrontMatterProblem("explicit tags such as `!!str` are not supported")
    static let nestedMaps = FrontMatterProblem("nested maps are not supported")
    static let nestedLists = FrontMatterProblem("nested lists are not supported")
    static let tooLong = FrontMatterProblem("a value is longer than 64 KiB")
    static let tooManyItems = FrontMatterProblem("the list has more than 100,000 items")
}

/// How a value starts on its line.
enum FrontMatterValueStart {
    /// Nothing (or a comment): the value, if any, is on the next lines.
    case empty
    /// A plain scalar; `hasMappingIndicator` when it holds `: ` (a map, not a scalar).
    case plain(FrontMatterSegment, hasMappingIndicator: Bool)
    case quoted(FrontMatterSegment)
    case flowList([FrontMatterSegment])
    /// `|` (literal) or `>` (folded): the value is the next, indented, lines.
    case blockScalar(folded: Bool)
}

/// Reads the keys and scalars of one line of front matter. Every scan is one pass over the line.
struct FrontMatterSyntax {
    static let maximumScalarBytes = 64 * 1024
    static let maximumListItems = 100_000

    let bytes: [UInt8]
    let line: Int
    /// The value of `tags` or `tag`: a `#` followed by a non-blank character starts an entry.
    var isTagValue = false

    /// The key of a `key: value` line that starts at `start`, and where its value starts.
    func key(_ start: Int, _ end: Int) throws(FrontMatterProblem) -> (String, valueStart: Int) {
        let first = bytes[start]
        let key: String
        var colon: Int
        switch first {
        case ascii("\""), ascii("'"):
            let quoted = try self.quoted(start, end)
            key = quoted.segment.text
            colon = quoted.end
            while colon < end, isBlank(bytes[colon]) { colon += 1 }
            guard colon < end, bytes[colon] == ascii(":") else { throw FrontMatterProblem("expected `:` after the quoted key") }
        case ascii("&"), ascii("*"): throw .aliases
        case ascii("!"): throw .explicitTags
        case ascii("["), ascii("{"): throw FrontMatterProblem("a list or a map as a key is not supported")
        case ascii("?") where start + 1 == end || isBlank(bytes[start + 1]):
            throw FrontMatterProblem("complex keys (`? …`) are not supported")
        default:
            colon = start
            while colon < end, !isMappingIndicator(at: colon, end) {
                // A comment before any `: `: the line has no key.
                if bytes[colon] == ascii("#"), colon > start, isBlank(bytes[colon - 1]) { colon = end } else { colon += 1 }
            }
            guard colon < end else { throw FrontMatterProblem("expected `key: value`") }
            var last = colon
            while last > start, isBlank(bytes[last - 1]) { last -= 1 }
            guard last - start <= Self.maximumScalarBytes else { throw FrontMatterProblem("a key is longer than 64 KiB") }
            key = String(decoding: bytes[start..<last], as: UTF8.self)
        }
        guard !key.isEmpty else { throw FrontMatterProblem("a key is empty") }
        return (key, colon + 1)
    }

    /// The value that starts at or after `start` (blanks skipped). `inItem`: the value of a block
    /// list item; `allowsBlockScalar`: on its key's line.
    func value(_ start: Int, _ end: Int, inItem: Bool, allowsBlockScalar: Bool) throws(FrontMatterProblem) -> FrontMatterValueStart {
        var i = start
        while i < end, isBlank(bytes[i]) { i += 1 }
        guard i < end, !startsComment(at: i, end) else { return .empty }
        switch bytes[i] {
        case ascii("&"), ascii("*"): throw .aliases
        case ascii("!"): throw .explicitTags
        case ascii("{"): throw .nestedMaps
        case ascii("["):
            if inItem { throw .nestedLists }
            return .flowList(try flowList(i, end))
        case ascii("\""), ascii("'"):
            let quoted = try self.quoted(i, end)
            try expectEnd(quoted.end, end, after: "the quoted value")
            return .quoted(quoted.segment)
        case ascii("|"), ascii(">"):
            guard allowsBlockScalar else {
                throw FrontMatterProblem(
                    inItem ? "block scalars in lists are not supported" : "`|` and `>` must follow their key on its line")
            }
            var k = i + 1
            if k < end, bytes[k] == ascii("-") || bytes[k] == ascii("+") { k += 1 }
            if k < end, FrontMatterScalar.isDigit(bytes[k]) {
                throw FrontMatterProblem("indentation indicators (`|2`) are not supported")
            }
            try expectEnd(k, end, after: "`\(Character(Unicode.Scalar(bytes[i])))`")
            return .blockScalar(folded: bytes[i] == ascii(">"))
        case ascii("-") where i + 1 == end || isBlank(bytes[i + 1]):
            throw inItem ? .nestedLists : FrontMatterProblem("a list item must start its own line")
        case ascii("@"), ascii("`"):
            throw FrontMatterProblem("a value cannot start with `@` or a backquote unless it is quoted")
        default:
            return try plain(i, end)
        }
    }

    /// A plain scalar from `start` to the end of the line or a comment, trailing blanks excluded.
    func plain(_ start: Int, _ end: Int) throws(FrontMatterProblem) -> FrontMatterValueStart {
        var i = start
        var last = start
        var hasMappingIndicator = false
        while i < end, !(i > start && startsComment(at: i, end)) {
            if isMappingIndicator(at: i, end) { hasMappingIndicator = true }
            if !isBlank(bytes[i]) { last = i + 1 }
            i += 1
        }
        return .plain(try segment(start..<last), hasMappingIndicator: hasMappingIndicator)
    }

    /// A quoted scalar (double quotes with YAML's escapes, or single quotes with `''`) that starts
    /// at `start`, and where it ends (after its closing quote).
    func quoted(_ start: Int, _ end: Int) throws(FrontMatterProblem) -> (segment: FrontMatterSegment, end: Int) {
        let quote = bytes[start]
        var text: [UInt8] = []
        var isVerbatim = true
        var i = start + 1
        while i < end {
            let byte = bytes[i]
            if byte == quote {
                guard quote == ascii("'"), i + 1 < end, bytes[i + 1] == ascii("'") else {
                    guard text.count <= Self.maximumScalarBytes else { throw .tooLong }
                    let segment = FrontMatterSegment(
                        text: String(decoding: text, as: UTF8.self), range: start + 1..<i, line: line, isVerbatim: isVerbatim)
                    return (segment, i + 1)
                }
                text.append(byte)
                isVerbatim = false
                i += 2
            } else if byte == ascii("\\"), quote == ascii("\"") {
                isVerbatim = false
                i = try escape(at: i + 1, end, into: &text)
            } else {
                text.append(byte)
                i += 1
            }
        }
        throw FrontMatterProblem("a quoted value does not end on its line (quoted values over several lines are not supported)")
    }

    /// Decodes the escape whose letter is at `i` into `text`; returns where the escape ends.
    private func escape(at i: Int, _ end: Int, into text: inout [UInt8]) throws(FrontMatterProblem) -> Int {
        guard i < end else { throw FrontMatterProblem("a quoted value does not end on its line") }
        let simple: [UInt8: UInt32] = [
            ascii("0"): 0, ascii("a"): 7, ascii("b"): 8, ascii("t"): 9, ascii("\t"): 9, ascii("n"): 10, ascii("v"): 11,
            ascii("f"): 12, ascii("r"): 13, ascii("e"): 27, ascii(" "): 32, ascii("\""): 34, ascii("/"): 47, ascii("\\"): 92,
            ascii("N"): 0x85, ascii("_"): 0xA0, ascii("L"): 0x2028, ascii("P"): 0x2029,
        ]
        let digits: Int
        switch bytes[i] {
        case ascii("x"): digits = 2
        case ascii("u"): digits = 4
        case ascii("U"): digits = 8
        default:
            guard let code = simple[bytes[i]] else {
                throw FrontMatterProblem("unknown escape `\\\(String(decoding: [bytes[i]], as: UTF8.self))` in a quoted value")
            }
            text.append(contentsOf: String(Character(Unicode.Scalar(code)!)).utf8)
            return i + 1
        }
        guard i + digits < end, bytes[i + 1...i + digits].allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
            let code = UInt32(String(decoding: bytes[i + 1...i + digits], as: UTF8.self), radix: 16),
            let scalar = Unicode.Scalar(code)
        else { throw FrontMatterProblem("an invalid `\\\(Character(Unicode.Scalar(bytes[i])))` escape in a quoted value") }
        text.append(contentsOf: String(Character(scalar)).utf8)
        return i + 1 + digits
    }

    /// `[a, "b, c", d]` on one line: its items (empty ones skipped).
    private func flowList(_ start: Int, _ end: Int) throws(FrontMatterProblem) -> [FrontMatterSegment] {
        let unclosed = FrontMatterProblem("a list in brackets does not end on its line (`]` missing)")
        var items: [FrontMatterSegment] = []
        var i = start + 1
        while true {
            while i < end, isBlank(bytes[i]) { i += 1 }
            guard i < end, !startsComment(at: i, end) else { throw unclosed }
            switch bytes[i] {
            case ascii("]"):
                try expectEnd(i + 1, end, after: "the list")
                return items
            case ascii(","):
                i += 1
                continue
            case ascii("["), ascii("{"): throw FrontMatterProblem("nested lists and maps are not supported")
            case ascii("&"), ascii("*"): throw .aliases
            case ascii("!"): throw .explicitTags
            default: break
            }
            guard items.count < Self.maximumListItems else { throw .tooManyItems }
            if bytes[i] == ascii("\"") || bytes[i] == ascii("'") {
                let quoted = try self.quoted(i, end)
                items.append(quoted.segment)
                i = quoted.end
            } else {
                let itemStart = i
                var last = i
                while i < end, bytes[i] != ascii(","), bytes[i] != ascii("]"), !(i > itemStart && startsComment(at: i, end)) {
                    let byte = bytes[i]
                    if byte == ascii("[") || byte == ascii("{") || byte == ascii("}") {
                        throw FrontMatterProblem("nested lists and maps are not supported")
                    }
                    if isMappingIndicator(at: i, end, inFlow: true) { throw .nestedMaps }
                    if !isBlank(byte) { last = i + 1 }
                    i += 1
                }
                items.append(try segment(itemStart..<last))
            }
            while i < end, isBlank(bytes[i]) { i += 1 }
            guard i < end, bytes[i] == ascii(",") || bytes[i] == ascii("]") else {
                throw i < end && !startsComment(at: i, end) ? FrontMatterProblem("unexpected text in a list in brackets") : unclosed
            }
        }
    }

    /// Only blanks or a comment may follow a value's end.
    private func expectEnd(_ start: Int, _ end: Int, after what: String) throws(FrontMatterProblem) {
        var i = start
        while i < end, isBlank(bytes[i]) { i += 1 }
        guard i == end || (i > start && bytes[i] == ascii("#")) else { throw FrontMatterProblem("unexpected text after \(what)") }
    }

    private func segment(_ range: Range<Int>) throws(FrontMatterProblem) -> FrontMatterSegment {
        guard range.count <= Self.maximumScalarBytes else { throw .tooLong }
        return FrontMatterSegment(text: String(decoding: bytes[range], as: UTF8.self), range: range, line: line, isVerbatim: true)
    }

    /// A `#` that starts a comment: after a blank (or at a value's start), unless it starts a tag.
    private func startsComment(at i: Int, _ end: Int) -> Bool {
        guard bytes[i] == ascii("#"), i == 0 || isBlank(bytes[i - 1]) else {
            return false
        }
        return !(isTagValue && i + 1 < end && !isBlank(bytes[i + 1]))
    }

    /// `:` followed by a blank or the line end (in a flow list, also by `,` or `]`).
    private func isMappingIndicator(at i: Int, _ end: Int, inFlow: Bool = false) -> Bool {
        guard bytes[i] == ascii(":") else { return false }
        return i + 1 == end || isBlank(bytes[i + 1]) || (inFlow && (bytes[i + 1] == ascii(",") || bytes[i + 1] == ascii("]")))
    }
}

private func ascii(_ character: Unicode.Scalar) -> UInt8 { UInt8(ascii: character) }
private func isBlank(_ byte: UInt8) -> Bool { byte == ascii(" ") || byte == ascii("\t") }

import Foundation

/// A token of the predicate format.
struct PredicateToken: Sendable {
    enum Kind: Sendable, Equatable {
        /// A bare identifier or dotted path; may be a keyword.
        case identifier(String)
        /// A key that is never a keyword: `#word` or `` `text` ``.
        case key(String)
        case string(String)
        case integer(Int64)
        case double(Double)
        /// An operator or punctuation: `==` `=` `!=` `<>` `<` `<=` `=<` `>` `>=` `=>` `&&` `||` `!` `(` `)` `{` `}` `,`.
        case symbol(String)
        case options(Predicate.Options)
        /// `%@` (`"@"`) or `%K` (`"K"`).
        case argument(Character)
        case end
    }

    var kind: Kind
    /// 1-based character column of the token's first character.
    var column: Int
    /// The source text of the token.
    var text: String
    /// Index into the source characters just past the token.
    var end: Int

    /// The token as an error message names it.
    var quoted: String {
        switch kind {
        case .end: "end of input"
        case .string: "string \(text)"
        case .integer, .double: "number \(text)"
        default: "'\(text)'"
        }
    }

    /// The upper-cased identifier, for keyword checks (nil for any other token).
    var keyword: String? {
        if case .identifier(let name) = kind, !name.contains(".") { name.uppercased() } else { nil }
    }

    func isSymbol(_ s: String) -> Bool { kind == .symbol(s) }
}

/// A recursive-descent parser for the predicate format (see ``Predicate``), lexing lazily so that errors
/// are reported in source order.
///
/// Nesting is limited to ``maximumNesting`` levels, so that no input recurses deeply: not this parser, nor a
/// walk over the tree it builds (evaluation, description, the query prefilter, the tree's own deinit).
struct PredicateParser {
    /// How many levels of `NOT`, parentheses, aggregates `{…}` and function calls may nest.
    static let maximumNesting = 100

    private let chars: [Character]
    private var index = 0
    private let arguments: [FieldValue]
    private var argumentsUsed = 0
    private var lookahead: PredicateToken?
    /// Index into `chars` just past the last consumed token.
    private var consumedEnd = 0
    /// How many nesting levels enclose the token being parsed.
    private var nesting = 0
    /// What `NOW` stands for: the time the parse began, the same for every `NOW` of one predicate.
    private let now = Date()

    init(format: String, arguments: [FieldValue]) {
        self.chars = Array(format)
        self.arguments = arguments
    }

    private var endColumn: Int { chars.count + 1 }

    private func fail(_ message: String, at column: Int) -> RecordStoreError {
        .predicateSyntax(message: message, position: column)
    }

    /// Enters one nesting level opened by `token`; the caller leaves it with `nesting -= 1`.
    ///
    /// - Throws: a syntax error at `token` when that would nest deeper than ``maximumNesting``.
    private mutating func enterNesting(at token: PredicateToken) throws(RecordStoreError) {
        guard nesting < Self.maximumNesting else {
            throw fail(
                "predicate nests deeper than \(Self.maximumNesting) levels of NOT, parentheses, {…} or function calls",
                at: token.column)
        }
        nesting += 1
    }

    // MARK: Parser

    mutating func parse() throws(RecordStoreError) -> Predicate.Node {
        let first = try peek()
        if first.kind == .end {
            throw fail("expected a predicate, found end of input", at: first.column)
        }
        let node = try parseOr()
        let next = try peek()
        switch next.kind {
        case .end: break
        case .symbol(")"): throw fail("unexpected ')'", at: next.column)
        default: throw fail("expected AND, OR or end of input, found \(next.quoted)", at: next.column)
        }
        if argumentsUsed < arguments.count {
            throw fail("too many arguments: \(arguments.count) given, \(argumentsUsed) used", at: endColumn)
        }
        return node
    }

    private mutating func parseOr() throws(RecordStoreError) -> Predicate.Node {
        var terms = [try parseAnd()]
        while true {
            let t = try peek()
            guard t.keyword == "OR" || t.isSymbol("||") else { break }
            _ = try next()
            terms.append(try parseAnd())
        }
        return .makeOr(terms)
    }

    private mutating func parseAnd() throws(RecordStoreError) -> Predicate.Node {
        var terms = [try parseNot()]
        while true {
            let t = try peek()
            guard t.keyword == "AND" || t.isSymbol("&&") else { break }
            _ = try next()
            terms.append(try parseNot())
        }
        return .makeAnd(terms)
    }

    private mutating func parseNot() throws(RecordStoreError) -> Predicate.Node {
        let t = try peek()
        if t.keyword == "NOT" || t.isSymbol("!") {
            try enterNesting(at: t)
            defer { nesting -= 1 }
            _ = try next()
            let after = try peek()
            if after.kind == .end {
                throw fail("expected a predicate after '\(t.text)', found end of input", at: after.column)
            }
            return .not(try parseNot())
        }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws(RecordStoreError) -> Predicate.Node {
        let t = try peek()
        if t.isSymbol("(") {
            try enterNesting(at: t)
            defer { nesting -= 1 }
            _ = try next()
            if try peek().isSymbol(")") {
                let close = try peek()
                throw fail("expected a predicate inside '(', found ')'", at: close.column)
            }
            let inner = try parseOr()
            let close = try peek()
            guard close.isSymbol(")") else {
                throw fail("expected ')' to close '(' at column \(t.column), found \(close.quoted)", at: close.column)
            }
            _ = try next()
            return inner
        }
        switch t.keyword {
        case "TRUEPREDICATE":
            _ = try next()
            return .constant(true)
        case "FALSEPREDICATE":
            _ = try next()
            return .constant(false)
        default:
            return try parseComparison()
        }
    }

    private mutating func parseComparison() throws(RecordStoreError) -> Predicate.Node {
        let lhsStart = try peek()
        var lhs = try parseOperand(expected: "expected a key or value")
        let lhsText = String(chars[(lhsStart.column - 1)..<consumedEnd])

        let opToken = try peek()
        var op: Predicate.Operator
        switch opToken.kind {
        case .symbol("=="), .symbol("="): op = .equal
        case .symbol("!="), .symbol("<>"): op = .notEqual
        case .symbol("<"): op = .less
        case .symbol("<="), .symbol("=<"): op = .lessOrEqual
        case .symbol(">"): op = .greater
        case .symbol(">="), .symbol("=>"): op = .greaterOrEqual
        case .identifier:
            switch opToken.keyword {
            case "IN": op = .in
            case "CONTAINS": op = .contains
            case "BEGINSWITH": op = .beginsWith
            case "ENDSWITH": op = .endsWith
            case "LIKE": op = .like
            case "AND", "OR", "NOT", "TRUE", "YES", "FALSE", "NO", "NIL", "NULL", "TRUEPREDICATE", "FALSEPREDICATE":
                throw fail("expected an operator after '\(lhsText)', found \(opToken.quoted)", at: opToken.column)
            default:
                throw fail("unknown operator '\(opToken.text)'", at: opToken.column)
            }
        default:
            throw fail("expected an operator after '\(lhsText)', found \(opToken.quoted)", at: opToken.column)
        }
        _ = try next()

        var options = Predicate.Options()
        if case .options(let o) = try peek().kind {
            options = o
            _ = try next()
        }

        let opText = String(chars[(opToken.column - 1)..<consumedEnd])
        var rhs = try parseOperand(expected: "expected a key or value after '\(opText)'")

        // Normalize `value OP key` to `key OP' value` where the operator has a mirror image.
        if case .key = rhs, !isKey(lhs), let swapped = op.swapped {
            swap(&lhs, &rhs)
            op = swapped
        }
        return .comparison(.init(lhs: lhs, op: op, options: options, rhs: rhs))
    }

    private func isKey(_ operand: Predicate.Operand) -> Bool {
        if case .key = operand { true } else { false }
    }

    private mutating func parseOperand(expected: String) throws(RecordStoreError) -> Predicate.Operand {
        let t = try peek()
        switch t.kind {
        case .identifier(let name):
            switch t.keyword {
            case "TRUE", "YES":
                _ = try next()
                return .value(.bool(true))
            case "FALSE", "NO":
                _ = try next()
                return .value(.bool(false))
            case "NIL", "NULL":
                _ = try next()
                return .null
            case "NOW":
                // `NOW` or `NOW()`: the current date (NSPredicate's `now()`).
                _ = try next()
                if try peek().isSymbol("(") {
                    let open = try next()
                    guard try peek().isSymbol(")") else {
                        throw fail("NOW() takes no arguments, found \(try peek().quoted)", at: open.column + 1)
                    }
                    _ = try next()
                }
                return .value(.date(now))
            case "AND", "OR", "NOT", "IN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "TRUEPREDICATE",
                "FALSEPREDICATE":
                throw fail("\(expected), found \(t.quoted)", at: t.column)
            case "CAST", "REFERENCE", "BYTES", "ASSET":
                _ = try next()
                if try peek().isSymbol("(") {
                    return .value(try parseFunction(t))
                }
                return .key(name)
            default:
                _ = try next()
                return .key(name)
            }
        case .key(let name):
            _ = try next()
            return .key(name)
        case .string(let s):
            _ = try next()
            return .value(.string(s))
        case .integer(let i):
            _ = try next()
            return .value(.int64(i))
        case .double(let d):
            _ = try next()
            return .value(.double(d))
        case .argument(let spec):
            _ = try next()
            guard argumentsUsed < arguments.count else {
                throw fail("missing argument for %\(spec) (\(arguments.count) given)", at: t.column)
            }
            let argument = arguments[argumentsUsed]
            argumentsUsed += 1
            if spec == "K" {
                guard case .string(let key) = argument else {
                    throw fail(
                        "argument \(argumentsUsed) for %K must be a string key name, found \(argument.typeName)",
                        at: t.column)
                }
                return .key(key)
            }
            return .value(argument)
        case .symbol("{"):
            return .value(try parseAggregate())
        default:
            throw fail("\(expected), found \(t.quoted)", at: t.column)
        }
    }

    /// `{v1, v2, ...}` (the `{` not yet consumed).
    private mutating func parseAggregate() throws(RecordStoreError) -> FieldValue {
        let open = try next()
        try enterNesting(at: open)
        defer { nesting -= 1 }
        var items: [FieldValue] = []
        if try peek().isSymbol("}") {
            _ = try next()
            return .list([])
        }
        while true {
            items.append(try parseValue(expected: "expected a value in aggregate"))
            let t = try peek()
            if t.isSymbol(",") {
                _ = try next()
            } else if t.isSymbol("}") {
                _ = try next()
                return .list(items)
            } else {
                throw fail(
                    "expected ',' or '}' to close '{' at column \(open.column), found \(t.quoted)", at: t.column)
            }
        }
    }

    /// An operand that must be a value (not a key, not NIL).
    private mutating func parseValue(expected: String) throws(RecordStoreError) -> FieldValue {
        let t = try peek()
        switch try parseOperand(expected: expected) {
        case .value(let v): return v
        case .key, .null: throw fail("\(expected), found \(t.quoted)", at: t.column)
        }
    }

    /// `CAST(…)`, `REFERENCE(…)`, `BYTES(…)`, `ASSET(…)`: the name consumed, the `(` not yet.
    private mutating func parseFunction(_ name: PredicateToken) throws(RecordStoreError) -> FieldValue {
        let fn = name.keyword ?? ""
        try enterNesting(at: name)
        defer { nesting -= 1 }
        _ = try next()  // (
        var args: [(token: PredicateToken, value: FieldValue)] = []
        if !(try peek().isSymbol(")")) {
            while true {
                let t = try peek()
                args.append((t, try parseValue(expected: "expected a value as argument of \(fn)")))
                let sep = try peek()
                if sep.isSymbol(",") {
                    _ = try next()
                    continue
                }
                guard sep.isSymbol(")") else {
                    throw fail("expected ',' or ')' in \(fn)(…), found \(sep.quoted)", at: sep.column)
                }
                break
            }
        }
        let close = try next()  // )
        func wrongArguments(_ usage: String) -> RecordStoreError {
            fail("\(fn) takes \(usage)", at: args.first?.token.column ?? close.column)
        }
        switch fn {
        case "CAST":
            guard args.count == 2, case .string(let type) = args[1].value else {
                throw wrongArguments("(<number>, \"NSDate\")")
            }
            guard type.caseInsensitiveCompare("NSDate") == .orderedSame else {
                throw fail("unsupported CAST type \"\(type)\" (only \"NSDate\")", at: args[1].token.column)
            }
            switch args[0].value {
            case .int64(let i): return .date(Date(timeIntervalSinceReferenceDate: Double(i)))
            case .double(let d): return .date(Date(timeIntervalSinceReferenceDate: d))
            case .date(let d): return .date(d)
            case .string(let text):
                guard let date = Self.isoDate(text) else {
                    throw fail(
                        "CAST(\"\(text)\", \"NSDate\"): not an ISO 8601 date (2026-12-01, 2026-12-01T09:30:00Z)",
                        at: args[0].token.column)
                }
                return .date(date)
            default: throw wrongArguments("(<number> or \"<ISO 8601 date>\", \"NSDate\")")
            }
        case "REFERENCE":
            guard (1...2).contains(args.count), case .string(let recordName) = args[0].value else {
                throw wrongArguments("(\"recordName\") or (\"recordName\", \"none\"|\"deleteSelf\")")
            }
            var action = Reference.Action.none
            if args.count == 2 {
                guard case .string(let a) = args[1].value, let parsed = Reference.Action(rawValue: a) else {
                    throw fail("reference action must be \"none\" or \"deleteSelf\"", at: args[1].token.column)
                }
                action = parsed
            }
            return .reference(Reference(recordID: RecordID(recordName: recordName), action: action))
        case "BYTES":
            guard args.count == 1, case .string(let b64) = args[0].value else {
                throw wrongArguments("(\"<base64>\")")
            }
            guard let data = Data(base64Encoded: b64) else {
                throw fail("invalid base64 in BYTES", at: args[0].token.column)
            }
            return .bytes(data)
        default:  // ASSET
            guard args.count == 2, case .string(let sha) = args[0].value, case .int64(let size) = args[1].value
            else { throw wrongArguments("(\"<sha256>\", <size>)") }
            return .asset(Asset(sha256: sha, size: size))
        }
    }

    /// A date written `2026-12-01` (midnight UTC) or `2026-12-01T09:30:00Z` (a zone or `Z`
    /// required, fractional seconds allowed); nil for anything else.
    static func isoDate(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        for options: ISO8601DateFormatter.Options in [[.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds]] {
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return date }
        }
        // The date-only format ignores whatever follows the date: only a date alone is one.
        guard text.utf8.count == 10 else { return nil }
        formatter.formatOptions = [.withFullDate, .withDashSeparatorInDate]
        return formatter.date(from: text)
    }

    // MARK: Lexer

    private mutating func peek() throws(RecordStoreError) -> PredicateToken {
        if let lookahead { return lookahead }
        let t = try lex()
        lookahead = t
        return t
    }

    private mutating func next() throws(RecordStoreError) -> PredicateToken {
        let t = try peek()
        lookahead = nil
        consumedEnd = t.end
        return t
    }

    private func char(_ i: Int) -> Character? { i < chars.count ? chars[i] : nil }

    private mutating func lex() throws(RecordStoreError) -> PredicateToken {
        while let c = char(index), c.isWhitespace { index += 1 }
        let start = index
        guard let c = char(index) else { return PredicateToken(kind: .end, column: endColumn, text: "", end: chars.count) }
        func token(_ kind: PredicateToken.Kind) -> PredicateToken {
            PredicateToken(kind: kind, column: start + 1, text: String(chars[start..<index]), end: index)
        }

        if Predicate.isIdentifierStart(c) {
            return token(.identifier(lexPath()))
        }
        if c.isASCII && c.isNumber || (c == "-" && (char(index + 1)?.isASCII ?? false) && char(index + 1)!.isNumber) {
            return try lexNumber()
        }
        switch c {
        case "#":
            index += 1
            guard let n = char(index), Predicate.isIdentifierStart(n) else {
                throw fail("expected a key name after '#'", at: index + 1)
            }
            return token(.key(lexPath()))
        case "`":
            index += 1
            var key = ""
            while true {
                guard let n = char(index) else { throw fail("unterminated quoted key", at: start + 1) }
                index += 1
                if n == "`" { break }
                if n == "\\", let escaped = char(index) {
                    key.append(escaped)
                    index += 1
                } else {
                    key.append(n)
                }
            }
            return token(.key(key))
        case "'", "\"":
            return token(.string(try lexString(quote: c)))
        case "%":
            index += 1
            guard let spec = char(index) else { throw fail("expected '@' or 'K' after '%'", at: endColumn) }
            index += 1
            guard spec == "@" || spec == "K" else {
                throw fail("unknown format specifier '%\(spec)' (use %@ or %K)", at: start + 1)
            }
            return token(.argument(spec))
        case "[":
            index += 1
            var options = Predicate.Options()
            while true {
                guard let n = char(index) else {
                    throw fail("expected ']' to close comparison options, found end of input", at: endColumn)
                }
                if n == "]" {
                    if options.isEmpty { throw fail("expected comparison options c or d in '[]'", at: index + 1) }
                    index += 1
                    break
                }
                switch n {
                case "c", "C": options.insert(.caseInsensitive)
                case "d", "D": options.insert(.diacriticInsensitive)
                default: throw fail("unknown comparison option '\(n)' (expected c or d)", at: index + 1)
                }
                index += 1
            }
            return token(.options(options))
        default:
            break
        }
        if let n = char(index + 1) {
            let pair = String([c, n])
            if ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"].contains(pair) {
                index += 2
                return token(.symbol(pair))
            }
        }
        if "=<>!(){},".contains(c) {
            index += 1
            return token(.symbol(String(c)))
        }
        if c == "&" || c == "|" {
            throw fail("unexpected character '\(c)' (did you mean '\(c)\(c)'?)", at: start + 1)
        }
        throw fail("unexpected character '\(c)'", at: start + 1)
    }

    /// An identifier, or a dotted path of identifiers (one key).
    private mutating func lexPath() -> String {
        let start = index
        while true {
            while let c = char(index), Predicate.isIdentifierPart(c) { index += 1 }
            if char(index) == ".", let n = char(index + 1), Predicate.isIdentifierStart(n) {
                index += 1
            } else {
                break
            }
        }
        return String(chars[start..<index])
    }

    private mutating func lexNumber() throws(RecordStoreError) -> PredicateToken {
        let start = index
        func digits() { while let c = char(index), c.isASCII, c.isNumber { index += 1 } }
        if char(index) == "-" { index += 1 }
        digits()
        var isInteger = true
        if char(index) == ".", let n = char(index + 1), n.isASCII, n.isNumber {
            isInteger = false
            index += 1
            digits()
        }
        if let e = char(index), e == "e" || e == "E" {
            var j = index + 1
            if let s = char(j), s == "+" || s == "-" { j += 1 }
            if let d = char(j), d.isASCII, d.isNumber {
                isInteger = false
                index = j
                digits()
            }
        }
        let text = String(chars[start..<index])
        if let c = char(index), Predicate.isIdentifierPart(c) || c == "." {
            var end = index
            while let c = char(end), Predicate.isIdentifierPart(c) || c == "." { end += 1 }
            throw fail("invalid number '\(String(chars[start..<end]))'", at: start + 1)
        }
        if isInteger {
            guard let i = Int64(text) else {
                throw fail("integer \(text) is out of range (use a decimal point for a double)", at: start + 1)
            }
            return PredicateToken(kind: .integer(i), column: start + 1, text: text, end: index)
        }
        guard let d = Double(text) else { throw fail("invalid number '\(text)'", at: start + 1) }
        return PredicateToken(kind: .double(d), column: start + 1, text: text, end: index)
    }

    /// A quoted string; `index` is at the opening quote.
    private mutating func lexString(quote: Character) throws(RecordStoreError) -> String {
        let start = index
        index += 1
        var scalars = String.UnicodeScalarView()
        while true {
            guard let c = char(index) else { throw fail("unterminated string literal", at: start + 1) }
            if c == quote {
                index += 1
                return String(scalars)
            }
            guard c == "\\" else {
                scalars.append(contentsOf: c.unicodeScalars)
                index += 1
                continue
            }
            let escapeColumn = index + 1
            index += 1
            guard let e = char(index) else { throw fail("unterminated string literal", at: start + 1) }
            index += 1
            switch e {
            case "n": scalars.append("\n")
            case "t": scalars.append("\t")
            case "r": scalars.append("\r")
            case "0": scalars.append("\0")
            case "\\", "'", "\"": scalars.append(contentsOf: e.unicodeScalars)
            case "u":
                var value = try lexHex4(escapeColumn: escapeColumn)
                if (0xD800...0xDBFF).contains(value) {
                    // A UTF-16 surrogate pair written as two escapes.
                    guard char(index) == "\\", char(index + 1) == "u" else {
                        throw fail("unpaired surrogate in \\u escape", at: escapeColumn)
                    }
                    index += 2
                    let low = try lexHex4(escapeColumn: escapeColumn)
                    guard (0xDC00...0xDFFF).contains(low) else {
                        throw fail("unpaired surrogate in \\u escape", at: escapeColumn)
                    }
                    value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(value) else {
                    throw fail("invalid \\u escape", at: escapeColumn)
                }
                scalars.append(scalar)
            default:
                throw fail("unknown escape sequence '\\\(e)' in string literal", at: escapeColumn)
            }
        }
    }

    private mutating func lexHex4(escapeColumn: Int) throws(RecordStoreError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let h = char(index), let digit = h.hexDigitValue, h.isASCII else {
                throw fail("expected 4 hex digits after \\u", at: escapeColumn)
            }
            value = value * 16 + UInt32(digit)
            index += 1
        }
        return value
    }
}

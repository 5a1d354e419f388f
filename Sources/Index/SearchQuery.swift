/// A search as people type it, turned into an FTS5 query expression.
///
/// The rules (README and notesfs(1) say the same):
/// - Words are implicitly ANDed; `"a phrase"`; `prefix*`; `AND`, `OR`, `NOT` (upper case, between
///   terms); parentheses. Case and accents are folded.
/// - Every word is quoted for FTS5, so punctuation (`c++`, `don't`, `-x`) is never FTS5 syntax:
///   it is split into words as the tokenizer splits the text.
/// - A word or phrase without a letter or digit (`&`, `–`, `🎉`) is dropped; a query left with no
///   word is an error.
/// - Chinese, Japanese and Korean characters match as substrings (``CJKText``): `東京` finds
///   `明日は東京に行きます`; a word that mixes them with other letters is its pieces ANDed; a
///   phrase that holds them is its words ANDed.
/// - At most ``maximumBytes`` bytes, ``maximumTerms`` terms, parentheses ``maximumDepth`` deep:
///   the parse is linear, and FTS5's work stays bounded.
public struct SearchQuery: Sendable, Equatable {
    /// The FTS5 `MATCH` expression.
    public let expression: String
    /// The query's runs of CJK characters: FTS5 cannot mark them in a snippet (they match the
    /// `cjk` column), so a snippet is made around them.
    public let substrings: [String]

    public static let maximumBytes = 4096
    public static let maximumTerms = 64
    public static let maximumDepth = 16

    /// Why a query cannot be run (shown to the user).
    public struct SyntaxError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    private enum Token: Equatable {
        case term(String)
        case op(String)
        case open, close
        /// A word or phrase without a letter or digit.
        case dropped
    }

    /// Parses `text`.
    ///
    /// - Throws: ``SyntaxError`` for an empty query, one without words, one over the bounds, an
    ///   unclosed quote, unbalanced parentheses or an operator without a term on each side.
    public init(_ text: String) throws(SyntaxError) {
        guard text.utf8.count <= Self.maximumBytes else {
            throw SyntaxError(description: "the query is longer than \(Self.maximumBytes) bytes")
        }
        let tokens = try Self.tokens(text)
        guard !tokens.isEmpty else { throw SyntaxError(description: "the query is empty") }
        guard tokens.contains(where: { if case .term = $0 { true } else { false } }) else {
            throw SyntaxError(
                description: "the query has no words to search for (letters or digits; punctuation and emoji are not searched)")
        }
        // Check the shape: operators between operands, parentheses balanced and bounded.
        var depth = 0
        var terms = 0
        var expectOperand = true
        var parts: [String] = []
        for token in tokens {
            switch token {
            case .dropped:
                continue
            case .term(let t):
                terms += 1
                guard terms <= Self.maximumTerms else {
                    throw SyntaxError(description: "the query has more than \(Self.maximumTerms) terms")
                }
                if !expectOperand { parts.append("AND") }
                parts.append(t)
                expectOperand = false
            case .open:
                if !expectOperand { parts.append("AND") }
                parts.append("(")
                depth += 1
                guard depth <= Self.maximumDepth else {
                    throw SyntaxError(description: "parentheses are nested more than \(Self.maximumDepth) deep")
                }
                expectOperand = true
            case .close:
                guard depth > 0 else { throw SyntaxError(description: "a ')' has no '('") }
                guard !expectOperand else { throw SyntaxError(description: "'()' or an operator before ')' has nothing to apply to") }
                parts.append(")")
                depth -= 1
            case .op(let op):
                guard !expectOperand else { throw SyntaxError(description: "\(op) needs a term before it") }
                parts.append(op)
                expectOperand = true
            }
        }
        guard depth == 0 else { throw SyntaxError(description: "a '(' is not closed") }
        guard !expectOperand else { throw SyntaxError(description: "the query ends with an operator") }
        expression = parts.joined(separator: " ")
        substrings = CJKText.pieces(text).joined().compactMap { piece in
            if case .run(let run) = piece { String(String.UnicodeScalarView(run)) } else { nil }
        }
    }

    /// Splits `text` into terms, operators and parentheses (one pass).
    private static func tokens(_ text: String) throws(SyntaxError) -> [Token] {
        var tokens: [Token] = []
        let scalars = text.unicodeScalars
        var i = scalars.startIndex
        while i < scalars.endIndex {
            let c = scalars[i]
            if c.properties.isWhitespace {
                i = scalars.index(after: i)
            } else if c == "(" {
                i = scalars.index(after: i)
                tokens.append(.open)
            } else if c == ")" {
                i = scalars.index(after: i)
                tokens.append(.close)
            } else if c == "\"" {
                let start = scalars.index(after: i)
                guard let end = scalars[start...].firstIndex(of: "\"") else { throw SyntaxError(description: "a quote is not closed") }
                i = scalars.index(after: end)
                var prefix = false
                if i < scalars.endIndex, scalars[i] == "*" {
                    i = scalars.index(after: i)
                    prefix = true
                }
                tokens.append(phrase(scalars[start..<end], prefix: prefix))
            } else {
                let start = i
                while i < scalars.endIndex, !scalars[i].properties.isWhitespace, !"()\"".unicodeScalars.contains(scalars[i]) {
                    i = scalars.index(after: i)
                }
                let word = scalars[start..<i]
                if word.elementsEqual("AND".unicodeScalars) || word.elementsEqual("OR".unicodeScalars)
                    || word.elementsEqual("NOT".unicodeScalars)
                {
                    tokens.append(.op(String(word)))
                } else {
                    let prefix = word.count > 1 && word.last == "*"
                    tokens.append(term(prefix ? word.dropLast() : word, prefix: prefix))
                }
            }
        }
        return tokens
    }

    /// A word as an FTS5 term: quoted; with CJK characters, its pieces ANDed (each CJK run as the
    /// phrase of its bigrams).
    private static func term(_ word: Substring.UnicodeScalarView, prefix: Bool) -> Token {
        guard CJKText.hasWord(word) else { return .dropped }
        let text = String(word)
        guard word.contains(where: CJKText.isCJK) else { return .term(quoted(text) + (prefix ? "*" : "")) }
        let parts = CJKText.pieces(text, all: true).joined().map { piece in
            switch piece {
            case .run(let run): CJKText.expression(run)
            case .other(let letters): quoted(letters)
            }
        }
        return .term(parts.count == 1 ? parts[0] : "(" + parts.joined(separator: " AND ") + ")")
    }

    /// A quoted phrase; one with CJK characters is its words ANDed.
    private static func phrase(_ content: Substring.UnicodeScalarView, prefix: Bool) -> Token {
        guard CJKText.hasWord(content) else { return .dropped }
        guard content.contains(where: CJKText.isCJK) else { return .term(quoted(String(content)) + (prefix ? "*" : "")) }
        let words = content.split(whereSeparator: \.properties.isWhitespace).compactMap { word -> String? in
            if case .term(let t) = term(word, prefix: false) { return t }
            return nil
        }
        return .term(words.count == 1 ? words[0] : "(" + words.joined(separator: " AND ") + ")")
    }

    private static func quoted(_ text: String) -> String { "\"" + text.replacingAll("\"", "\"\"") + "\"" }
}

extension String {
    func replacingAll(_ target: Character, _ replacement: String) -> String {
        var result = ""
        for c in self { if c == target { result += replacement } else { result.append(c) } }
        return result
    }
}

/// A search as people type it, turned into an FTS5 query expression.
///
/// Words are implicitly ANDed; `"a phrase"`; `prefix*`; `AND`, `OR`, `NOT` (upper case, between
/// terms); parentheses. Every word is quoted for FTS5, so punctuation (`c++`, `don't`, `-x`) is
/// never FTS5 syntax: it is split into words as the tokenizer splits the text.
public struct SearchQuery: Sendable, Equatable {
    /// The FTS5 `MATCH` expression.
    public let expression: String

    /// Why a query cannot be run (shown to the user).
    public struct SyntaxError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Parses `text`.
    ///
    /// - Throws: ``SyntaxError`` for an empty query, an unclosed quote, unbalanced parentheses or
    ///   an operator without a term on each side.
    public init(_ text: String) throws(SyntaxError) {
        enum Token: Equatable {
            case term(String)
            case op(String)
            case open, close
        }
        var tokens: [Token] = []
        var scalars = Array(text.unicodeScalars)[...]
        while let c = scalars.first {
            if c.properties.isWhitespace {
                scalars.removeFirst()
            } else if c == "(" {
                scalars.removeFirst()
                tokens.append(.open)
            } else if c == ")" {
                scalars.removeFirst()
                tokens.append(.close)
            } else if c == "\"" {
                scalars.removeFirst()
                guard let end = scalars.firstIndex(of: "\"") else { throw SyntaxError(description: "a quote is not closed") }
                var phrase = String(String.UnicodeScalarView(scalars[..<end]))
                scalars = scalars[(end + 1)...]
                var prefix = false
                if scalars.first == "*" {
                    scalars.removeFirst()
                    prefix = true
                }
                phrase = "\"" + phrase.replacingAll("\"", "\"\"") + "\"" + (prefix ? "*" : "")
                tokens.append(.term(phrase))
            } else {
                var word = ""
                while let d = scalars.first, !d.properties.isWhitespace, d != "(", d != ")", d != "\"" {
                    word.unicodeScalars.append(d)
                    scalars.removeFirst()
                }
                if ["AND", "OR", "NOT"].contains(word) {
                    tokens.append(.op(word))
                } else {
                    let prefix = word.hasSuffix("*") && word.count > 1
                    let stem = prefix ? String(word.dropLast()) : word
                    tokens.append(.term("\"" + stem.replacingAll("\"", "\"\"") + "\"" + (prefix ? "*" : "")))
                }
            }
        }
        guard !tokens.isEmpty else { throw SyntaxError(description: "the query is empty") }
        // Check the shape: operators between operands, parentheses balanced.
        var depth = 0
        var expectOperand = true
        var parts: [String] = []
        for token in tokens {
            switch token {
            case .term(let t):
                if !expectOperand { parts.append("AND") }
                parts.append(t)
                expectOperand = false
            case .open:
                if !expectOperand { parts.append("AND") }
                parts.append("(")
                depth += 1
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
    }
}

extension String {
    func replacingAll(_ target: Character, _ replacement: String) -> String {
        var result = ""
        for c in self { if c == target { result += replacement } else { result.append(c) } }
        return result
    }
}

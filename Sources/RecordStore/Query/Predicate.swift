import Foundation

/// A query condition over a record's fields, written in the `NSPredicate` format subset CloudKit accepts.
///
/// ```swift
/// let p = try Predicate(format: "folder == %@ AND title BEGINSWITH[c] %@", .reference(ref), "read")
/// p.evaluate { record[$0] }
/// ```
///
/// Grammar (keywords are case-insensitive):
/// - comparisons `key OP value` or `value OP key`, with `OP` one of `==` `=` `!=` `<>` `<` `<=` `=<` `>` `>=` `=>`
///   `IN` `CONTAINS` `BEGINSWITH` `ENDSWITH` `LIKE` (`*` and `?` wildcards), optionally followed by `[c]`, `[d]` or
///   `[cd]` (case- and diacritic-insensitive);
/// - `AND`/`&&`, `OR`/`||`, `NOT`/`!`, parentheses (precedence `NOT` > `AND` > `OR`), `TRUEPREDICATE`, `FALSEPREDICATE`;
/// - literals: quoted strings (`'…'`, `"…"`, escapes `\n \t \r \\ \' \" \uXXXX`), integers, decimals, `TRUE`/`YES`,
///   `FALSE`/`NO`, `NIL`/`NULL`, aggregates `{a, b}`, `NOW` (or `NOW()`: the date the parse began);
/// - keys: identifiers (dotted paths are one key), `#keyword` for a key spelled like a keyword, `` `any text` ``,
///   or `%K`; `%@` takes the next argument as a value (a `.list` is an aggregate).
///
/// Extensions so that every ``FieldValue`` has a literal (``description`` uses them):
/// `CAST(<seconds since 2001-01-01>, "NSDate")` for a date (also `CAST("2026-12-01", "NSDate")`: an ISO 8601
/// date, midnight UTC, or date and time with a zone), `REFERENCE("name")` / `REFERENCE("name", "deleteSelf")`,
/// `BYTES("<base64>")` and `ASSET("<sha256>", <size>)`.
public struct Predicate: Sendable, Hashable, CustomStringConvertible {
    /// How a comparison compares.
    enum Operator: String, Sendable, Hashable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case `in` = "IN"
        case contains = "CONTAINS"
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        case like = "LIKE"

        /// The operator with its operands swapped, when there is one (`a < b` is `b > a`).
        var swapped: Operator? {
            switch self {
            case .equal: .equal
            case .notEqual: .notEqual
            case .less: .greater
            case .lessOrEqual: .greaterOrEqual
            case .greater: .less
            case .greaterOrEqual: .lessOrEqual
            case .in: .contains
            case .contains: .in
            case .beginsWith, .endsWith, .like: nil
            }
        }
    }

    /// The `[cd]` options of a comparison.
    struct Options: OptionSet, Sendable, Hashable {
        let rawValue: UInt8
        static let caseInsensitive = Options(rawValue: 1)
        static let diacriticInsensitive = Options(rawValue: 2)

        var description: String {
            if isEmpty { return "" }
            return "[" + (contains(.caseInsensitive) ? "c" : "") + (contains(.diacriticInsensitive) ? "d" : "") + "]"
        }
    }

    /// One side of a comparison.
    enum Operand: Sendable, Hashable {
        case key(String)
        case value(FieldValue)
        /// `NIL` / `NULL`.
        case null
    }

    struct Comparison: Sendable, Hashable {
        var lhs: Operand
        var op: Operator
        var options: Options
        var rhs: Operand
    }

    indirect enum Node: Sendable, Hashable {
        case constant(Bool)
        case comparison(Comparison)
        case not(Node)
        /// Two or more terms, none of them an `and` (nested ones are flattened).
        case and([Node])
        /// Two or more terms, none of them an `or`.
        case or([Node])
    }

    let root: Node

    init(root: Node) { self.root = root }

    /// Parses `format`; `%@` takes the next argument, `%K` takes the next argument (a `.string`) as a key name.
    ///
    /// - Throws: ``RecordStoreError/predicateSyntax(message:position:)`` with the 1-based column of the offending token.
    public init(format: String, _ arguments: FieldValue...) throws(RecordStoreError) {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses `format`, taking `%@` and `%K` arguments from `argumentArray` in order.
    public init(format: String, argumentArray: [FieldValue]) throws(RecordStoreError) {
        var parser = PredicateParser(format: format, arguments: argumentArray)
        self.root = try parser.parse()
    }

    /// Matches every record.
    public static let truePredicate = Predicate(root: .constant(true))
    /// Matches no record.
    public static let falsePredicate = Predicate(root: .constant(false))

    /// Evaluates against one record. `value(key)` returns the field value for a key, or nil if the record lacks it.
    ///
    /// The caller maps system keys (`recordName` to a `.string`, `recordID` to a `.reference`,
    /// `creationDate`/`modificationDate` to a `.date`, `recordType` to a `.string`).
    public func evaluate(_ value: (String) -> FieldValue?) -> Bool {
        root.evaluate(value)
    }

    /// Evaluates against a dictionary of fields.
    public func evaluate(_ fields: [String: FieldValue]) -> Bool {
        root.evaluate { fields[$0] }
    }

    /// Every key the predicate reads.
    public var keys: Set<String> {
        var result = Set<String>()
        root.collectKeys(into: &result)
        return result
    }

    /// When the predicate requires `key == <reference>` at the top level (alone or as a term of a top-level AND),
    /// that key and the referenced record name: the store can answer from its reference index instead of scanning.
    ///
    /// The index only narrows the candidates: `==` also matches a `.string` field equal to the record name,
    /// and the other terms still apply, so candidates must still be checked with ``evaluate(_:)``.
    public var referenceConstraint: (key: String, recordName: String)? {
        func constraint(_ node: Node) -> (key: String, recordName: String)? {
            guard case .comparison(let c) = node, c.op == .equal,
                case .key(let key) = c.lhs, case .value(.reference(let ref)) = c.rhs
            else { return nil }
            return (key, ref.recordID.recordName)
        }
        switch root {
        case .and(let terms): return terms.lazy.compactMap(constraint).first
        default: return constraint(root)
        }
    }

    /// When the predicate requires `key == "string"` (no options) at the top level (alone or as a
    /// term of a top-level AND): that key and string, so that an index of string values (or of
    /// reference targets: a reference equals the string of its record name) answers it.
    public var stringEqualityConstraint: (key: String, value: String)? {
        func constraint(_ node: Node) -> (key: String, value: String)? {
            guard case .comparison(let c) = node, c.op == .equal, c.options.isEmpty else { return nil }
            switch (c.lhs, c.rhs) {
            case (.key(let key), .value(.string(let value))), (.value(.string(let value)), .key(let key)): return (key, value)
            default: return nil
            }
        }
        switch root {
        case .and(let terms): return terms.lazy.compactMap(constraint).first
        default: return constraint(root)
        }
    }

    /// A canonical form that parses back to an equal predicate.
    public var description: String { root.description }
}

// MARK: - Building (used by the parser)

extension Predicate.Node {
    /// `a AND b`, flattening nested ANDs.
    static func makeAnd(_ terms: [Predicate.Node]) -> Predicate.Node {
        let flat = terms.flatMap { term -> [Predicate.Node] in
            if case .and(let inner) = term { inner } else { [term] }
        }
        return flat.count == 1 ? flat[0] : .and(flat)
    }

    /// `a OR b`, flattening nested ORs.
    static func makeOr(_ terms: [Predicate.Node]) -> Predicate.Node {
        let flat = terms.flatMap { term -> [Predicate.Node] in
            if case .or(let inner) = term { inner } else { [term] }
        }
        return flat.count == 1 ? flat[0] : .or(flat)
    }

    func collectKeys(into keys: inout Set<String>) {
        switch self {
        case .constant: break
        case .comparison(let c):
            if case .key(let k) = c.lhs { keys.insert(k) }
            if case .key(let k) = c.rhs { keys.insert(k) }
        case .not(let inner): inner.collectKeys(into: &keys)
        case .and(let terms), .or(let terms): for t in terms { t.collectKeys(into: &keys) }
        }
    }
}

// MARK: - Description

extension Predicate.Node: CustomStringConvertible {
    var description: String {
        switch self {
        case .constant(let b): b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let c):
            "\(c.lhs.description) \(c.op.rawValue)\(c.options.description) \(c.rhs.description)"
        case .not(let inner):
            switch inner {
            case .constant, .comparison, .not: "NOT \(inner.description)"
            case .and, .or: "NOT (\(inner.description))"
            }
        case .and(let terms):
            terms.map { term in
                if case .or = term { "(\(term.description))" } else { term.description }
            }.joined(separator: " AND ")
        case .or(let terms):
            // AND binds tighter, so no term needs parentheses (nested ORs are flattened).
            terms.map(\.description).joined(separator: " OR ")
        }
    }
}

extension Predicate.Operand: CustomStringConvertible {
    var description: String {
        switch self {
        case .key(let k): Predicate.formatKey(k)
        case .value(let v): Predicate.formatValue(v)
        case .null: "NIL"
        }
    }
}

extension Predicate {
    /// Words that cannot be keys without a `#` prefix.
    static let reservedWords: Set<String> = [
        "AND", "OR", "NOT", "TRUEPREDICATE", "FALSEPREDICATE", "TRUE", "YES", "FALSE", "NO", "NIL", "NULL",
        "IN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES", "BETWEEN", "ANY", "ALL", "SOME", "NONE",
        "CAST", "REFERENCE", "BYTES", "ASSET", "SELF", "FIRST", "LAST", "SIZE", "SUBQUERY", "FUNCTION", "NOW",
    ]

    static func isIdentifierStart(_ c: Character) -> Bool {
        c == "_" || (c.isASCII && c.isLetter)
    }

    static func isIdentifierPart(_ c: Character) -> Bool {
        c == "_" || (c.isASCII && (c.isLetter || c.isNumber))
    }

    /// A key as the parser reads it back: a bare identifier path, `#word` for reserved words, else back-quoted.
    static func formatKey(_ key: String) -> String {
        let parts = key.split(separator: ".", omittingEmptySubsequences: false)
        let isPath = parts.allSatisfy { part in
            guard let first = part.first, isIdentifierStart(first) else { return false }
            return part.allSatisfy(isIdentifierPart)
        }
        if isPath {
            if parts.count == 1 && reservedWords.contains(key.uppercased()) { return "#" + key }
            return key
        }
        var out = "`"
        for c in key {
            if c == "`" || c == "\\" { out.append("\\") }
            out.append(c)
        }
        return out + "`"
    }

    static func formatString(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f {
                    out += String(format: "\\u%04X", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    static func formatDouble(_ d: Double) -> String {
        if d.isNaN { return "NAN" }
        if d.isInfinite { return d < 0 ? "-1e999" : "1e999" }
        return "\(d)"  // shortest round-trip form; always has a '.' or an exponent
    }

    static func formatValue(_ value: FieldValue) -> String {
        switch value {
        case .string(let s): formatString(s)
        case .int64(let i): "\(i)"
        case .double(let d): formatDouble(d)
        case .bool(let b): b ? "TRUE" : "FALSE"
        case .date(let d): "CAST(\(formatDouble(d.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case .bytes(let data): "BYTES(\"\(data.base64EncodedString())\")"
        case .asset(let a): "ASSET(\(formatString(a.sha256)), \(a.size))"
        case .reference(let r):
            switch r.action {
            case .none: "REFERENCE(\(formatString(r.recordID.recordName)))"
            case .deleteSelf: "REFERENCE(\(formatString(r.recordID.recordName)), \"deleteSelf\")"
            }
        case .list(let items): "{" + items.map(formatValue).joined(separator: ", ") + "}"
        }
    }
}

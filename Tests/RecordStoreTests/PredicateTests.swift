import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// Foundation also declares a `Predicate` (the macro-based one); this module's tests mean RecordStore's.
typealias Predicate = RecordStore.Predicate

/// One predicate format with its arguments.
struct PredicateCase: Sendable, CustomTestStringConvertible {
    var format: String
    var arguments: [FieldValue]
    init(_ format: String, _ arguments: FieldValue...) {
        self.format = format
        self.arguments = arguments
    }
    var testDescription: String { arguments.isEmpty ? format : "\(format) \(arguments)" }
}

enum Samples {
    static let f1 = RecordID(recordName: "f1")
    static let f2 = RecordID(recordName: "f2")

    static func date(_ t: Double) -> FieldValue { .date(Date(timeIntervalSinceReferenceDate: t)) }

    /// Five records; `gamma` and `epsilon` lack some fields, `delta` lacks `pinned`.
    static let records: [String: [String: FieldValue]] = [
        "alpha": [
            "title": "Apple pie", "body": "Crème brûlée recipe", "count": .int64(3), "rating": .double(4.5),
            "created": date(1000), "pinned": true, "folder": .reference(Reference(recordID: f1, action: .none)),
            "tags": .list(["cooking", "dessert"]),
        ],
        "beta": [
            "title": "apple tart", "body": "Creme brulee", "count": .int64(10), "rating": .double(2.0),
            "created": date(2000), "pinned": false, "folder": .reference(Reference(recordID: f2, action: .none)),
            "tags": .list(["cooking"]),
        ],
        "gamma": [
            "title": "Banana", "count": .double(3.0), "pinned": true, "created": date(1500.5),
        ],
        "delta": [
            "title": "Éclair", "count": .int64(-5), "rating": .int64(5), "tags": .list([]),
            "folder": .reference(Reference(recordID: f1, action: .deleteSelf)), "created": date(3000), "a.b": "x",
        ],
        "epsilon": [
            "title": "naïve café", "count": .int64(0), "folder": .string("f2"),
        ],
    ]

    static func matches(_ predicate: Predicate) -> Set<String> {
        Set(records.filter { _, fields in predicate.evaluate { fields[$0] } }.keys)
    }
}

@Suite("Predicate")
struct PredicateTests {
    static let all: Set<String> = ["alpha", "beta", "gamma", "delta", "epsilon"]
    static let f1Ref = FieldValue.reference(Reference(recordID: Samples.f1, action: .none))
    static let f2Ref = FieldValue.reference(Reference(recordID: Samples.f2, action: .deleteSelf))

    static let matchTable: [(PredicateCase, Set<String>)] = [
        (PredicateCase("TRUEPREDICATE"), all),
        (PredicateCase("falsepredicate"), []),
        (PredicateCase("title == 'Banana'"), ["gamma"]),
        (PredicateCase("title = \"Banana\""), ["gamma"]),
        (PredicateCase("'Banana' == title"), ["gamma"]),
        (PredicateCase("title ==[c] 'APPLE PIE'"), ["alpha"]),
        (PredicateCase("title == 'APPLE PIE'"), []),
        (PredicateCase("title BEGINSWITH 'apple'"), ["beta"]),
        (PredicateCase("title beginswith[c] 'apple'"), ["alpha", "beta"]),
        (PredicateCase("title CONTAINS[cd] 'ECLAIR'"), ["delta"]),
        (PredicateCase("title CONTAINS[c] 'eclair'"), []),
        (PredicateCase("title CONTAINS[d] 'cafe'"), ["epsilon"]),
        (PredicateCase("body ==[d] 'Creme brulee recipe'"), ["alpha"]),
        (PredicateCase("body ==[cd] 'CREME BRULEE'"), ["beta"]),
        (PredicateCase("title ENDSWITH 'tart'"), ["beta"]),
        (PredicateCase("title LIKE 'A*e'"), ["alpha"]),
        (PredicateCase("title LIKE[c] '?pple*'"), ["alpha", "beta"]),
        (PredicateCase("title LIKE 'B?n*a'"), ["gamma"]),
        (PredicateCase("count > 2"), ["alpha", "beta", "gamma"]),
        (PredicateCase("count == 3"), ["alpha", "gamma"]),
        (PredicateCase("count >= 3.0 AND count < 10"), ["alpha", "gamma"]),
        (PredicateCase("3 < count"), ["beta"]),
        (PredicateCase("count =< 0"), ["delta", "epsilon"]),
        (PredicateCase("count => 10"), ["beta"]),
        (PredicateCase("count > -5.5 AND count < -4"), ["delta"]),
        (PredicateCase("rating > 4"), ["alpha", "delta"]),
        (PredicateCase("rating == 2"), ["beta"]),
        (PredicateCase("count < 0 OR pinned == NO"), ["beta", "delta"]),
        (PredicateCase("NOT pinned == TRUE"), ["beta", "delta", "epsilon"]),
        (PredicateCase("!(pinned == yes)"), ["beta", "delta", "epsilon"]),
        (PredicateCase("pinned != YES"), ["beta", "delta", "epsilon"]),
        (PredicateCase("pinned <> false"), ["alpha", "gamma", "delta", "epsilon"]),
        (PredicateCase("rating == nil"), ["gamma", "epsilon"]),
        (PredicateCase("rating != NULL"), ["alpha", "beta", "delta"]),
        (PredicateCase("nil == rating"), ["gamma", "epsilon"]),
        (PredicateCase("nothere == nil"), all),
        (PredicateCase("nothere != 1"), all),
        (PredicateCase("nothere < 1 OR nothere CONTAINS 'x'"), []),
        (PredicateCase("folder == %@", f1Ref), ["alpha", "delta"]),
        (PredicateCase("folder == %@", f2Ref), ["beta", "epsilon"]),
        (PredicateCase("folder == 'f2'"), ["beta", "epsilon"]),
        (PredicateCase("folder != %@", f1Ref), ["beta", "gamma", "epsilon"]),
        (PredicateCase("folder == %@ AND pinned == TRUE", f1Ref), ["alpha"]),
        (PredicateCase("tags CONTAINS 'cooking'"), ["alpha", "beta"]),
        (PredicateCase("'dessert' IN tags"), ["alpha"]),
        (PredicateCase("tags == {'cooking'}"), ["beta"]),
        (PredicateCase("title IN {'Banana', 'Éclair', 'Nope'}"), ["gamma", "delta"]),
        (PredicateCase("title IN[c] {'banana'}"), ["gamma"]),
        (PredicateCase("count IN %@", .list([1, 3, 10])), ["alpha", "beta", "gamma"]),
        (PredicateCase("count IN {}"), []),
        (PredicateCase("title IN 'Banana split'"), ["gamma"]),
        (PredicateCase("title CONTAINS 'an'"), ["gamma"]),
        (PredicateCase("%K == %@", "title", "Banana"), ["gamma"]),
        (PredicateCase("%K > %@", "count", 5), ["beta"]),
        (PredicateCase("(count > 2 OR count < 0) AND NOT (title BEGINSWITH 'B')"), ["alpha", "beta", "delta"]),
        (PredicateCase("count > 2 OR count < 0 AND title BEGINSWITH 'B'"), ["alpha", "beta", "gamma"]),
        (PredicateCase("title == 'Banana' || title == 'Éclair' && count < 0"), ["gamma", "delta"]),
        (PredicateCase("NOT NOT title == 'Banana'"), ["gamma"]),
        (PredicateCase("created > CAST(1500, 'NSDate')"), ["beta", "gamma", "delta"]),
        (PredicateCase("created < %@", Samples.date(2500)), ["alpha", "beta", "gamma"]),
        (PredicateCase("created == %@", Samples.date(1500.5)), ["gamma"]),
        (PredicateCase("a.b == 'x'"), ["delta"]),
        (PredicateCase("title > 'B'"), ["beta", "gamma", "delta", "epsilon"]),
        (PredicateCase("title <[c] 'b'"), ["alpha", "beta"]),
        // Type mismatches: false, never a trap.
        (PredicateCase("count > 'x'"), []),
        (PredicateCase("tags BEGINSWITH 'c'"), []),
        (PredicateCase("pinned < TRUE"), []),
        (PredicateCase("created == 1000"), []),
        (PredicateCase("title LIKE 5"), []),
        (PredicateCase("count CONTAINS 3"), []),
        (PredicateCase("1 == 1"), all),
        (PredicateCase("TRUEPREDICATE AND FALSEPREDICATE OR title == 'Banana'"), ["gamma"]),
    ]

    @Test(arguments: matchTable)
    func matches(_ c: PredicateCase, _ expected: Set<String>) throws {
        let predicate = try Predicate(format: c.format, argumentArray: c.arguments)
        #expect(Samples.matches(predicate) == expected, "\(predicate)")
    }

    @Test(arguments: matchTable)
    func descriptionRoundTrips(_ c: PredicateCase, _ expected: Set<String>) throws {
        let predicate = try Predicate(format: c.format, argumentArray: c.arguments)
        let reparsed = try Predicate(format: predicate.description)
        #expect(reparsed == predicate, "\(predicate.description)")
        #expect(reparsed.description == predicate.description)
        #expect(Samples.matches(reparsed) == expected)
    }

    /// Values that have no plain literal still print in a form that parses back.
    static let specialValues: [FieldValue] = [
        .string("quote \" apostrophe ' backslash \\ newline \n tab \t bell \u{07} emoji 🎉 é"),
        .string(""),
        .int64(.min), .int64(.max), .int64(0),
        .double(0.1), .double(-2.5e-7), .double(1e300), .double(.infinity), .double(-.infinity), .double(.leastNonzeroMagnitude),
        .double(3),
        .bool(true), .bool(false),
        .date(Date(timeIntervalSinceReferenceDate: 123_456.789)), .date(Date(timeIntervalSinceReferenceDate: -1)),
        .bytes(Data([0, 1, 2, 255])), .bytes(Data()),
        .asset(Asset(sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", size: 0)),
        .reference(Reference(recordID: RecordID(recordName: "note-1"), action: .none)),
        .reference(Reference(recordID: RecordID(recordName: "we'ird \"name\""), action: .deleteSelf)),
        .list([]), .list(["a", 1, 2.5, .list([true])]),
    ]

    @Test(arguments: specialValues)
    func valueLiteralsRoundTrip(_ value: FieldValue) throws {
        let predicate = try Predicate(format: "field == %@", value)
        let reparsed = try Predicate(format: predicate.description)
        #expect(reparsed == predicate, "\(predicate.description)")
        if case .double(let d) = value, d.isNaN { return }
        #expect(reparsed.evaluate { $0 == "field" ? value : nil })
    }

    @Test(arguments: ["title", "my key", "AND", "in", "a.b", "x`y\\z", "1abc", "é", "a..b"])
    func keysRoundTrip(_ key: String) throws {
        let predicate = try Predicate(format: "%K == 1", .string(key))
        #expect(predicate.keys == [key])
        let reparsed = try Predicate(format: predicate.description)
        #expect(reparsed == predicate, "\(predicate.description)")
    }

    @Test(arguments: [
        ("3 < count", "count > 3"),
        ("'x' IN tags", "tags CONTAINS \"x\""),
        ("{1, 2} CONTAINS n", "n IN {1, 2}"),
        ("'abc' BEGINSWITH title", "\"abc\" BEGINSWITH title"),
        ("a = 1 and (b <> 2 or c =< 3) && !d => 4", "a == 1 AND (b != 2 OR c <= 3) AND NOT d >= 4"),
        ("a == 1 OR (b == 2 OR c == 3)", "a == 1 OR b == 2 OR c == 3"),
        ("NOT (a == 1 AND b == 2)", "NOT (a == 1 AND b == 2)"),
        ("title ==[dc] 'x'", "title ==[cd] \"x\""),
        ("x == yes OR y = null", "x == TRUE OR y == NIL"),
        ("#and == 1", "#and == 1"),
        ("`a b` == 1", "`a b` == 1"),
        ("x == 1.50", "x == 1.5"),
        ("x == 1e3", "x == 1000.0"),
        ("x == -7", "x == -7"),
        ("x == 'a\\u00e9\\uD83C\\uDF89'", "x == \"aé🎉\""),
    ])
    func canonicalDescription(_ format: String, _ expected: String) throws {
        #expect(try Predicate(format: format).description == expected)
    }

    // MARK: Errors

    static let errorTable: [(PredicateCase, String, Int)] = [
        (PredicateCase("title"), "expected an operator after 'title', found end of input", 6),
        (PredicateCase("title == 'abc"), "unterminated string literal", 10),
        (PredicateCase("title == 'a')"), "unexpected ')'", 13),
        (PredicateCase("title == %@ AND x == %@", "a"), "missing argument for %@ (1 given)", 22),
        (PredicateCase("title == %@", "a", "b"), "too many arguments: 2 given, 1 used", 12),
        (PredicateCase("title LIKEE 'x'"), "unknown operator 'LIKEE'", 7),
        (PredicateCase("  (title == 'a' OR x == 1"), "expected ')' to close '(' at column 3, found end of input", 26),
        (PredicateCase("(a == 1 b == 2)"), "expected ')' to close '(' at column 1, found 'b'", 9),
        (PredicateCase(""), "expected a predicate, found end of input", 1),
        (PredicateCase("   "), "expected a predicate, found end of input", 4),
        (PredicateCase("title =="), "expected a key or value after '==', found end of input", 9),
        (PredicateCase("title == AND"), "expected a key or value after '==', found 'AND'", 10),
        (PredicateCase("title == 'a' AND"), "expected a key or value, found end of input", 17),
        (PredicateCase("title 'a'"), "expected an operator after 'title', found string 'a'", 7),
        (PredicateCase("title AND x == 1"), "expected an operator after 'title', found 'AND'", 7),
        (PredicateCase("title ==[x] 'a'"), "unknown comparison option 'x'", 10),
        (PredicateCase("title ==[c 'a'"), "unknown comparison option ' '", 11),
        (PredicateCase("title == 'a\\q'"), "unknown escape sequence '\\q'", 12),
        (PredicateCase("title == 'a\\u12'"), "expected 4 hex digits after \\u", 12),
        (PredicateCase("%K == 1", .int64(3)), "for %K must be a string key name, found int64", 1),
        (PredicateCase("%K == 1"), "missing argument for %K (0 given)", 1),
        (PredicateCase("title == 'a' & x == 1"), "unexpected character '&' (did you mean '&&'?)", 14),
        (PredicateCase("title == 'a' x == 1"), "expected AND, OR or end of input, found 'x'", 14),
        (PredicateCase("count == 12abc"), "invalid number '12abc'", 10),
        (PredicateCase("count == 99999999999999999999"), "out of range", 10),
        (PredicateCase("NOT"), "expected a predicate after 'NOT', found end of input", 4),
        (PredicateCase("title == %d"), "unknown format specifier '%d'", 10),
        (PredicateCase("x IN {1, 2"), "expected ',' or '}' to close '{' at column 6, found end of input", 11),
        (PredicateCase("x IN {1, y}"), "expected a value in aggregate, found 'y'", 10),
        (PredicateCase("()"), "expected a predicate inside '(', found ')'", 2),
        (PredicateCase("title == 'é' AND §"), "unexpected character '§'", 18),
        (PredicateCase("CAST(1, 'NSString') == x"), "unsupported CAST type \"NSString\"", 9),
        (PredicateCase("x == REFERENCE('a', 'cascade')"), "reference action must be", 21),
        (PredicateCase("x == BYTES('***')"), "invalid base64", 12),
        (PredicateCase("x == #"), "expected a key name after '#'", 7),
        (PredicateCase("x == `abc"), "unterminated quoted key", 6),
        (PredicateCase(") == 1"), "expected a key or value, found ')'", 1),
    ]

    @Test(arguments: errorTable)
    func syntaxErrors(_ c: PredicateCase, _ message: String, _ column: Int) {
        do {
            let p = try Predicate(format: c.format, argumentArray: c.arguments)
            Issue.record("parsed as \(p)")
        } catch {
            guard case .predicateSyntax(let actualMessage, let position) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(actualMessage.contains(message), "message: \(actualMessage)")
            #expect(position == column, "message: \(actualMessage)")
        }
    }

    // MARK: Keys and reference constraints

    static let keysTable: [(PredicateCase, Set<String>)] = [
        (PredicateCase("TRUEPREDICATE"), Set<String>()),
        (PredicateCase("title == 'a'"), ["title"]),
        (PredicateCase("'a' == title OR NOT (count > 1 AND tags CONTAINS 'x')"), ["title", "count", "tags"]),
        (PredicateCase("%K == %@ AND a.b == c", "folder", f1Ref), ["folder", "a.b", "c"]),
    ]

    @Test(arguments: keysTable)
    func keys(_ c: PredicateCase, _ expected: Set<String>) throws {
        #expect(try Predicate(format: c.format, argumentArray: c.arguments).keys == expected)
    }

    @Test(
        arguments: [
            (PredicateCase("folder == %@ AND title BEGINSWITH 'a'", f1Ref), "folder", "f1"),
            (PredicateCase("folder == %@", f2Ref), "folder", "f2"),
            (PredicateCase("%@ == parent", f2Ref), "parent", "f2"),
            (PredicateCase("title == 'a' AND (x == 1 OR y == 2) AND owner == %@", f1Ref), "owner", "f1"),
            (PredicateCase("folder == REFERENCE('n1') && pinned == TRUE"), "folder", "n1"),
            (PredicateCase("folder == %@ OR x == 1", f1Ref), nil, nil),
            (PredicateCase("NOT folder == %@", f1Ref), nil, nil),
            (PredicateCase("folder != %@", f1Ref), nil, nil),
            (PredicateCase("folder == 'f1'"), nil, nil),
            (PredicateCase("folder CONTAINS %@", f1Ref), nil, nil),
            (PredicateCase("TRUEPREDICATE"), nil, nil),
        ] as [(PredicateCase, String?, String?)])
    func referenceConstraint(_ c: PredicateCase, _ key: String?, _ recordName: String?) throws {
        let constraint = try Predicate(format: c.format, argumentArray: c.arguments).referenceConstraint
        #expect(constraint?.key == key)
        #expect(constraint?.recordName == recordName)
    }

    @Test func variadicAndStaticPredicates() throws {
        let p = try Predicate(format: "title == %@ AND count == %@", "Banana", 3)
        #expect(Samples.matches(p) == ["gamma"])
        #expect(Samples.matches(Predicate.truePredicate) == Self.all)
        #expect(Predicate.truePredicate == (try Predicate(format: "TRUEPREDICATE")))
        #expect(Predicate.truePredicate.description == "TRUEPREDICATE")
        #expect(p.evaluate(["title": "Banana", "count": .double(3)]))
    }

    @Test func syntaxErrorDescribesColumn() {
        #expect(throws: RecordStoreError.predicateSyntax(message: "unexpected ')'", position: 8)) {
            try Predicate(format: "a == 1 )")
        }
    }
}

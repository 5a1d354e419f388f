import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// Input cannot make the predicate parser, or a walk over what it builds, recurse without bound.
@Suite struct PredicateNestingTests {
    /// A predicate nested `levels` deep by repeating `opener` before `core` and `closer` after it.
    static func nested(_ opener: String, _ core: String, _ closer: String, levels: Int) -> String {
        String(repeating: opener, count: levels) + core + String(repeating: closer, count: levels)
    }

    /// Formats 10,000 levels deep, and the column of the opener that goes past the limit.
    static let tooDeep: [(String, Int)] = [
        (nested("!", "title == \"x\"", "", levels: 6_000), 101),
        (nested("NOT ", "title == 'x'", "", levels: 10_000), 401),
        (nested("(", "title == 'x'", ")", levels: 10_000), 101),
        (nested("NOT (", "title == 'x'", ")", levels: 10_000), 251),
        ("x IN " + nested("{", "1", "}", levels: 10_000), 106),
        ("x == " + nested("BYTES(", "'AA=='", ")", levels: 10_000), 606),
        (String(repeating: "(", count: 10_000), 101),
    ]

    @Test(arguments: tooDeep)
    func deepNestingIsASyntaxErrorAtTheOpener(_ format: String, _ column: Int) {
        do {
            let p = try Predicate(format: format)
            Issue.record("parsed \(p.description.prefix(40))…")
        } catch {
            guard case .predicateSyntax(let message, let position) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(message.contains("nests deeper than 100 levels"), "\(message)")
            #expect(position == column)
        }
    }

    @Test func nestingUpToTheLimitParsesAndEvaluates() throws {
        let title: [String: FieldValue] = ["title": "x", "x": .int64(1)]
        let evenNots = try Predicate(format: Self.nested("NOT ", "title == 'x'", "", levels: 100))
        #expect(evenNots.evaluate(title))
        let oddNots = try Predicate(format: Self.nested("!", "title == 'x'", "", levels: 99))
        #expect(!oddNots.evaluate(title))
        let parentheses = try Predicate(format: Self.nested("(", "title == 'x'", ")", levels: 100))
        #expect(parentheses.evaluate(title))
        #expect(parentheses.description == "title == \"x\"")
        let aggregate = try Predicate(format: "x IN " + Self.nested("{", "1", "}", levels: 100))
        #expect(!aggregate.evaluate(title))
        #expect(try Predicate(format: aggregate.description) == aggregate)
    }
}

import Foundation

/// A derived index that can name the records that may match a substring comparison, so that a query
/// tests those instead of reading every record file (the full-text index implements it).
///
/// The store asks it for the `key CONTAINS "x"`, `CONTAINS[c]`, `BEGINSWITH`, `ENDSWITH` and `==`
/// string comparisons of a query (never `[d]`), all at once, and uses the answer only as a superset:
/// every candidate is still tested by the predicate, and every record changed after the answer's
/// token is tested too. So a source that is behind, or that answers nil, costs time, never a result.
public protocol QueryCandidateSource: AnyObject, Sendable {
    /// For each `(key, needle)` of records of `recordType`, the names of the records that may hold
    /// `needle` as a substring of `key`, as of `token`; nil in `names` for a pair it cannot narrow.
    /// `needle` is already in ``Predicate/substringForm(_:)``. Nil when it cannot answer at all.
    func candidates(recordType: String, substrings: [(key: String, needle: String)]) -> QueryCandidates?
}

/// A ``QueryCandidateSource``'s answer.
public struct QueryCandidates: Sendable {
    /// The state the answer describes: records changed after it are tested whatever the answer.
    public var token: ChangeToken
    /// Per asked pair: the record names that may match, or nil (any record may).
    public var names: [Set<String>?]
    /// Records the source could not read when it indexed them: always tested.
    public var alwaysTested: Set<String>

    public init(token: ChangeToken, names: [Set<String>?], alwaysTested: Set<String>) {
        self.token = token
        self.names = names
        self.alwaysTested = alwaysTested
    }
}

extension Predicate {
    /// The form a substring index stores text in, and looks needles up in: case folded as
    /// `CONTAINS[c]` folds, then canonically decomposed (NFD). If `haystack CONTAINS[c] needle` or
    /// `haystack CONTAINS needle`, then `substringForm(needle)` is a run of the Unicode scalars of
    /// `substringForm(haystack)`.
    public static func substringForm(_ text: String) -> String {
        let folded = PredicateMatching.fold(text, .caseInsensitive)
        if folded.isASCII { return folded }
        return folded.decomposedStringWithCanonicalMapping
    }

    /// The substring comparisons a ``QueryCandidateSource`` can narrow, and how the answers combine.
    indirect enum Narrowing {
        /// The comparison at this position of ``substringComparisons``.
        case leaf(Int)
        case all([Narrowing])
        case any([Narrowing])
        /// Matches nothing (`FALSEPREDICATE`).
        case none
    }

    /// The tree of narrowable comparisons and the `(key, needle)` pairs it refers to; nil when the
    /// predicate cannot be narrowed (a `NOT`, an `OR` with a term that cannot).
    func substringNarrowing() -> (Narrowing, [(key: String, needle: String)])? {
        var pairs: [(key: String, needle: String)] = []
        func walk(_ node: Node) -> Narrowing? {
            switch node {
            case .constant(let value): return value ? nil : Narrowing.none
            case .not: return nil
            case .and(let terms):
                let narrowed = terms.compactMap(walk)
                return narrowed.isEmpty ? nil : .all(narrowed)
            case .or(let terms):
                var narrowed: [Narrowing] = []
                for term in terms {
                    guard let n = walk(term) else { return nil }
                    narrowed.append(n)
                }
                return .any(narrowed)
            case .comparison(let c):
                guard !c.options.contains(.diacriticInsensitive) else { return nil }
                let key: String
                let needle: String
                switch (c.lhs, c.op, c.rhs) {
                case (.key(let k), .contains, .value(.string(let s))), (.key(let k), .beginsWith, .value(.string(let s))),
                    (.key(let k), .endsWith, .value(.string(let s))), (.key(let k), .equal, .value(.string(let s))),
                    (.value(.string(let s)), .in, .key(let k)):
                    key = k
                    needle = s
                default: return nil
                }
                pairs.append((key, Predicate.substringForm(needle)))
                return .leaf(pairs.count - 1)
            }
        }
        guard let tree = walk(root) else { return nil }
        return (tree, pairs)
    }
}

extension Predicate.Narrowing {
    /// The names the answers allow; nil: any.
    func names(_ answers: [Set<String>?]) -> Set<String>? {
        switch self {
        case .none: return []
        case .leaf(let i): return i < answers.count ? answers[i] : nil
        case .all(let terms):
            var result: Set<String>?
            for term in terms {
                guard let names = term.names(answers) else { continue }
                result = result.map { $0.intersection(names) } ?? names
            }
            return result
        case .any(let terms):
            var result = Set<String>()
            for term in terms {
                guard let names = term.names(answers) else { return nil }
                result.formUnion(names)
            }
            return result
        }
    }
}

/// The records a query must test, by a ``QueryCandidateSource``'s answer.
struct NarrowedCandidates {
    var names: Set<String>
    var alwaysTested: Set<String>
    /// The answer's token: records changed after it are tested whatever the names say.
    var seq: UInt64

    func mayMatch(_ entry: RecordMetadata) -> Bool {
        entry.seq > seq || names.contains(entry.recordID.recordName) || alwaysTested.contains(entry.recordID.recordName)
    }
}

extension RecordDatabase {
    /// Sets (nil: removes) the index that narrows substring queries.
    public func setCandidateSource(_ source: (any QueryCandidateSource)?) {
        candidateSource.withLock { $0 = source }
    }

    /// The records `query` must test by the candidate source, or nil to test every record of its type.
    func narrowedCandidates(_ query: Query) -> NarrowedCandidates? {
        guard let source = candidateSource.withLock({ $0 }), let (tree, pairs) = query.predicate.substringNarrowing(),
            let answer = source.candidates(recordType: query.recordType, substrings: pairs),
            answer.token.databaseID == databaseID, answer.names.count == pairs.count,
            let names = tree.names(answer.names)
        else { return nil }
        return NarrowedCandidates(names: names, alwaysTested: answer.alwaysTested, seq: answer.token.seq)
    }
}

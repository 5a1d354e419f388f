/// A test on a record file's raw bytes that every record matching a predicate passes: the query
/// decodes only the files that pass it.
///
/// For one record, each comparison is first answered from the record's in-memory metadata when
/// every key it reads is small (the index is the truth for small and system fields). What is left
/// is a comparison on a large field (a note's text); `key CONTAINS`, `BEGINSWITH`, `ENDSWITH` or
/// `==` with a string whose folded form is ASCII (options `[c]` or none) becomes a needle: the
/// record can match only if its file holds the needle as the JSON writer escapes it (ignoring
/// ASCII case for `[c]`), or holds a ``RawJSONHazards`` hazard. Anything else cannot be tested on
/// bytes and lets the file through. A file that passes is decoded and the predicate evaluated as
/// always, so the prefilter can cost speed, never a result.
struct RawFilePrefilter: Sendable {
    /// What a record's file must satisfy, after the record's small fields have been used (not
    /// `indirect`: a scan holds one for each record it reads, and nearly all are one needle).
    enum Condition: Sendable {
        /// Decided from the metadata alone.
        case known(Bool)
        /// Not testable on bytes: the file passes.
        case unknown
        case needle(Int)
        case all([Condition])
        case any([Condition])
    }

    private indirect enum Plan: Sendable {
        case constant(Bool)
        /// `keys` are the comparison's (worked out once, not for each record a scan tests).
        case comparison(Predicate.Comparison, keys: [String], needle: Int?)
        case not(Plan)
        case and([Plan])
        case or([Plan])
    }

    private let plan: Plan
    private let needles: [RawNeedle]

    init(_ predicate: Predicate) {
        var needles: [RawNeedle] = []
        func build(_ node: Predicate.Node) -> Plan {
            switch node {
            case .constant(let b): return .constant(b)
            case .comparison(let c):
                guard let needle = RawNeedle(c) else { return .comparison(c, keys: c.keys, needle: nil) }
                needles.append(needle)
                return .comparison(c, keys: c.keys, needle: needles.count - 1)
            case .not(let inner): return .not(build(inner))
            case .and(let terms): return .and(terms.map(build))
            case .or(let terms): return .or(terms.map(build))
            }
        }
        plan = build(predicate.root)
        self.needles = needles
    }

    /// The condition on the file of the record `metadata` describes.
    func condition(for metadata: RecordMetadata) -> Condition {
        Self.condition(plan, metadata)
    }

    private static func condition(_ plan: Plan, _ metadata: RecordMetadata) -> Condition {
        switch plan {
        case .constant(let b):
            return .known(b)
        case .comparison(let c, let keys, let needle):
            if !keys.contains(where: metadata.isLarge) {
                return .known(c.evaluate { RecordDatabase.value(of: $0, in: metadata) })
            }
            return needle.map(Condition.needle) ?? .unknown
        case .not(let inner):
            if case .known(let b) = condition(inner, metadata) { return .known(!b) }
            return .unknown
        case .and(let terms):
            var rest: [Condition] = []
            var decided = true
            for term in terms {
                switch condition(term, metadata) {
                case .known(false): return .known(false)
                case .known(true): continue
                case .unknown: decided = false
                case let other: rest.append(other)
                }
            }
            if rest.isEmpty { return decided ? .known(true) : .unknown }
            return rest.count == 1 ? rest[0] : .all(rest)
        case .or(let terms):
            var rest: [Condition] = []
            for term in terms {
                switch condition(term, metadata) {
                case .known(true): return .known(true)
                case .known(false): continue
                case .unknown: return .unknown
                case let other: rest.append(other)
                }
            }
            if rest.isEmpty { return .known(false) }
            return rest.count == 1 ? rest[0] : .any(rest)
        }
    }

    /// Whether a file with these bytes may hold a record meeting `condition`.
    func admits(_ bytes: UnsafeRawBufferPointer, _ condition: Condition) -> Bool {
        var hazard: Bool?
        return admits(bytes, condition, &hazard)
    }

    private func admits(_ bytes: UnsafeRawBufferPointer, _ condition: Condition, _ hazard: inout Bool?) -> Bool {
        switch condition {
        case .known(let b): return b
        case .unknown: return true
        case .needle(let i):
            if needles[i].found(in: bytes) { return true }
            if hazard == nil { hazard = RawJSONHazards.present(in: bytes) }
            return hazard!
        case .all(let terms):
            for term in terms where !admits(bytes, term, &hazard) { return false }
            return true
        case .any(let terms):
            for term in terms where admits(bytes, term, &hazard) { return true }
            return false
        }
    }
}

extension Predicate.Comparison {
    /// The keys this comparison reads.
    var keys: [String] {
        var keys: [String] = []
        if case .key(let k) = lhs { keys.append(k) }
        if case .key(let k) = rhs { keys.append(k) }
        return keys
    }
}

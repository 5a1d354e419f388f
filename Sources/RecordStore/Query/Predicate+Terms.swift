/// A predicate taken apart for a caller that answers parts of it from an index of its own, and
/// evaluated with SQL's comparisons for the keys it names.
extension Predicate {
    /// The terms of the top-level `AND`, each a predicate of its own (the predicate itself when its
    /// top level is no `AND`): a record matches the predicate when it matches every term.
    public var conjunctionTerms: [Predicate] {
        if case .and(let terms) = root { return terms.map(Predicate.init(root:)) }
        return [self]
    }

    /// Evaluates against one record, comparing the keys `isStrict` names the SQL way: such a key's
    /// value, missing or of another kind than the value it is compared with, matches no
    /// comparison, `!=` included (`due != "x"` needs a `due` that is text); `NOT` still negates a
    /// comparison, and `key == NIL` / `key != NIL` still test whether the key has a value. The
    /// other keys compare as ``evaluate(_:)-(String)->FieldValue?`` does.
    public func evaluate(_ value: (String) -> FieldValue?, strictKeys isStrict: (String) -> Bool) -> Bool {
        withoutActuallyEscaping(isStrict) { isStrict in root.evaluate(value, strict: isStrict) }
    }
}

extension Predicate {
    /// The predicate that matches what every one of `terms` matches (``truePredicate`` for none).
    public init(and terms: [Predicate]) {
        self.init(root: terms.isEmpty ? .constant(true) : .makeAnd(terms.map(\.root)))
    }
}

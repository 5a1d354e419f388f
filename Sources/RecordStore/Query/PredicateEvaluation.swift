import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

extension Predicate.Node {
    /// `isStrict`: the keys compared the SQL way (see ``Predicate/evaluate(_:strictKeys:)``); nil: none.
    func evaluate(_ value: (String) -> FieldValue?, strict isStrict: ((String) -> Bool)? = nil) -> Bool {
        switch self {
        case .constant(let b): b
        case .comparison(let c): c.evaluate(value, strict: isStrict)
        case .not(let inner): !inner.evaluate(value, strict: isStrict)
        case .and(let terms): terms.allSatisfy { $0.evaluate(value, strict: isStrict) }
        case .or(let terms): terms.contains { $0.evaluate(value, strict: isStrict) }
        }
    }
}

extension Predicate.Comparison {
    func evaluate(_ value: (String) -> FieldValue?, strict isStrict: ((String) -> Bool)? = nil) -> Bool {
        func resolve(_ operand: Predicate.Operand) -> FieldValue? {
            switch operand {
            case .key(let k): value(k)
            case .value(let v): v
            case .null: nil
            }
        }
        let left = resolve(lhs)
        let right = resolve(rhs)
        if let isStrict, isStrictOperand(lhs, isStrict) || isStrictOperand(rhs, isStrict), lhs != .null, rhs != .null {
            // SQL's way: a missing value, or one of another kind, matches no comparison, `!=` included.
            guard let left, let right else { return false }
            if op == .notEqual && !PredicateMatching.sameKind(left, right) { return false }
        }
        guard let left, let right else {
            // A missing field or NIL: equal only to another missing field or NIL; never ordered or contained.
            let bothNil = left == nil && right == nil
            switch op {
            case .equal: return bothNil
            case .notEqual: return !bothNil
            default: return false
            }
        }
        return PredicateMatching.apply(op, left, right, options)
    }

    private func isStrictOperand(_ operand: Predicate.Operand, _ isStrict: (String) -> Bool) -> Bool {
        if case .key(let key) = operand { isStrict(key) } else { false }
    }
}

/// The value semantics of comparisons: never traps, type mismatches do not match.
enum PredicateMatching {
    /// Whether two values are of one kind for `==` and `!=` (numbers are one kind, whatever their width).
    static func sameKind(_ l: FieldValue, _ r: FieldValue) -> Bool {
        switch (l, r) {
        case (.string, .string), (.int64, .int64), (.int64, .double), (.double, .int64), (.double, .double), (.date, .date),
            (.bool, .bool), (.reference, .reference), (.reference, .string), (.string, .reference), (.bytes, .bytes),
            (.asset, .asset), (.list, .list):
            return true
        default: return false
        }
    }

    static func apply(
        _ op: Predicate.Operator, _ l: FieldValue, _ r: FieldValue, _ options: Predicate.Options
    ) -> Bool {
        switch op {
        case .equal: return equal(l, r, options)
        case .notEqual: return !equal(l, r, options)
        case .less: return order(l, r, options).map { $0 < 0 } ?? false
        case .lessOrEqual: return order(l, r, options).map { $0 <= 0 } ?? false
        case .greater: return order(l, r, options).map { $0 > 0 } ?? false
        case .greaterOrEqual: return order(l, r, options).map { $0 >= 0 } ?? false
        case .in:
            // The left value is an element of the right list, or a substring of the right string.
            switch r {
            case .list(let items): return items.contains { equal(l, $0, options) }
            case .string(let haystack):
                guard case .string(let needle) = l else { return false }
                return contains(haystack, needle, options)
            default: return false
            }
        case .contains:
            // A substring of a string, or an element of a list (CloudKit's `tags CONTAINS 'x'`).
            switch l {
            case .string(let haystack):
                guard case .string(let needle) = r else { return false }
                return contains(haystack, needle, options)
            case .list(let items): return items.contains { equal($0, r, options) }
            default: return false
            }
        case .beginsWith:
            guard case .string(let s) = l, case .string(let prefix) = r else { return false }
            return fold(s, options).hasPrefix(fold(prefix, options))
        case .endsWith:
            guard case .string(let s) = l, case .string(let suffix) = r else { return false }
            return fold(s, options).hasSuffix(fold(suffix, options))
        case .like:
            guard case .string(let s) = l, case .string(let pattern) = r else { return false }
            return like(fold(s, options), pattern: fold(pattern, options))
        }
    }

    static func fold(_ s: String, _ options: Predicate.Options) -> String {
        if options.isEmpty { return s }
        // ASCII has no diacritics and folds case byte by byte: skip Foundation's slow general path.
        var text = s
        let ascii: String? = text.withUTF8 { bytes in
            var high: UInt8 = 0
            for byte in bytes { high |= byte }
            guard high < 0x80 else { return nil }
            guard options.contains(.caseInsensitive) else { return s }
            return String(unsafeUninitializedCapacity: bytes.count) { out in
                for i in 0..<bytes.count {
                    let byte = bytes[i]
                    out[i] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                }
                return bytes.count
            }
        }
        if let ascii { return ascii }
        var compare = String.CompareOptions()
        if options.contains(.caseInsensitive) { compare.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { compare.insert(.diacriticInsensitive) }
        return s.folding(options: compare, locale: nil)
    }

    /// Whether `needle` occurs in `hay` (memchr for the first byte, then memcmp).
    static func containsBytes(_ hay: UnsafeBufferPointer<UInt8>, _ needle: UnsafeBufferPointer<UInt8>) -> Bool {
        guard needle.count <= hay.count, let first = needle.first, let base = hay.baseAddress, let needleBase = needle.baseAddress else {
            return needle.isEmpty
        }
        var start = 0
        let last = hay.count - needle.count
        while start <= last {
            guard let found = memchr(base + start, Int32(first), last - start + 1) else { return false }
            let offset = UnsafeRawPointer(found) - UnsafeRawPointer(base)
            if memcmp(base + offset, needleBase, needle.count) == 0 { return true }
            start = offset + 1
        }
        return false
    }

    static func contains(_ haystack: String, _ needle: String, _ options: Predicate.Options) -> Bool {
        let n = fold(needle, options)
        if n.isEmpty { return true }
        var h = fold(haystack, options)
        var needleBytes = n
        // A byte search finds the same matches as range(of:) for these folded strings
        // when the needle is ASCII: UTF-8 cannot match an ASCII run inside a multi-byte sequence.
        if n.isASCII {
            return h.withUTF8 { hay in
                needleBytes.withUTF8 { needle in
                    containsBytes(hay, needle)
                }
            }
        }
        return h.range(of: n) != nil
    }

    /// Equality across types where it makes sense: numbers across int64/double, references by record ID
    /// (and against a string naming the record), lists element-wise.
    static func equal(_ l: FieldValue, _ r: FieldValue, _ options: Predicate.Options) -> Bool {
        switch (l, r) {
        case (.string(let a), .string(let b)): return fold(a, options) == fold(b, options)
        case (.int64, .int64), (.int64, .double), (.double, .int64), (.double, .double):
            return numericOrder(l, r) == 0
        case (.date(let a), .date(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.reference(let a), .reference(let b)): return a.recordID == b.recordID
        case (.reference(let a), .string(let b)), (.string(let b), .reference(let a)): return a.recordID.recordName == b
        case (.bytes(let a), .bytes(let b)): return a == b
        case (.asset(let a), .asset(let b)): return a == b
        case (.list(let a), .list(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { equal($0, $1, options) }
        default: return false
        }
    }

    /// -1, 0 or 1 for ordered pairs (strings, numbers, dates); nil when the values have no order.
    static func order(_ l: FieldValue, _ r: FieldValue, _ options: Predicate.Options) -> Int? {
        switch (l, r) {
        case (.string(let a), .string(let b)):
            let fa = fold(a, options)
            let fb = fold(b, options)
            return fa < fb ? -1 : fa == fb ? 0 : 1
        case (.int64, .int64), (.int64, .double), (.double, .int64), (.double, .double):
            return numericOrder(l, r)
        case (.date(let a), .date(let b)):
            return a < b ? -1 : a == b ? 0 : 1
        default: return nil
        }
    }

    /// Exact comparison of two numbers (no rounding of large int64s); nil with NaN.
    static func numericOrder(_ l: FieldValue, _ r: FieldValue) -> Int? {
        switch (l, r) {
        case (.int64(let a), .int64(let b)): return a < b ? -1 : a == b ? 0 : 1
        case (.double(let a), .double(let b)):
            if a.isNaN || b.isNaN { return nil }
            return a < b ? -1 : a == b ? 0 : 1
        case (.int64(let a), .double(let b)): return compare(a, b)
        case (.double(let a), .int64(let b)): return compare(b, a).map { -$0 }
        default: return nil
        }
    }

    /// Compares an integer with a double exactly.
    static func compare(_ i: Int64, _ d: Double) -> Int? {
        if d.isNaN { return nil }
        if d >= 9_223_372_036_854_775_808.0 { return -1 }  // 2^63: above every Int64
        if d < -9_223_372_036_854_775_808.0 { return 1 }
        let whole = d.rounded(.towardZero)
        let w = Int64(whole)
        if i != w { return i < w ? -1 : 1 }
        let fraction = d - whole
        return fraction > 0 ? -1 : fraction < 0 ? 1 : 0
    }

    /// `LIKE`: `*` matches any run of characters, `?` exactly one; a backslash makes the next character literal.
    static func like(_ s: String, pattern: String) -> Bool {
        enum Piece: Equatable {
            case literal(Character)
            case one
            case any
        }
        var pieces: [Piece] = []
        var escaped = false
        for c in pattern {
            if escaped {
                pieces.append(.literal(c))
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else if c == "*" {
                pieces.append(.any)
            } else if c == "?" {
                pieces.append(.one)
            } else {
                pieces.append(.literal(c))
            }
        }
        if escaped { pieces.append(.literal("\\")) }

        let text = Array(s)
        var ti = 0
        var pi = 0
        var star = -1
        var mark = 0
        while ti < text.count {
            if pi < pieces.count, pieces[pi] == .one || pieces[pi] == .literal(text[ti]) {
                ti += 1
                pi += 1
            } else if pi < pieces.count, pieces[pi] == .any {
                star = pi
                mark = ti
                pi += 1
            } else if star >= 0 {
                pi = star + 1
                mark += 1
                ti = mark
            } else {
                return false
            }
        }
        while pi < pieces.count, pieces[pi] == .any { pi += 1 }
        return pi == pieces.count
    }
}

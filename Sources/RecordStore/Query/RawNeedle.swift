#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A string a record file must hold (see ``RawFilePrefilter``): a comparison's folded ASCII
/// operand, escaped as ``JSONWriter`` writes it, found by `memchr` on its rarest byte.
struct RawNeedle: Sendable {
    /// The escaped needle; lowercase when ``ignoringCase``.
    let bytes: [UInt8]
    let ignoringCase: Bool
    /// The position in ``bytes`` searched for first.
    let anchor: Int

    /// The needle of `key OP 'string'` for `OP` one of `==`, `CONTAINS`, `BEGINSWITH`, `ENDSWITH`
    /// with no options or `[c]`, when the folded string is ASCII and not empty; nil otherwise.
    init?(_ comparison: Predicate.Comparison) {
        guard case .key = comparison.lhs, case .value(.string(let operand)) = comparison.rhs,
            [.equal, .contains, .beginsWith, .endsWith].contains(comparison.op),
            comparison.options.isSubset(of: .caseInsensitive)
        else { return nil }
        let folded = PredicateMatching.fold(operand, comparison.options)
        guard !folded.isEmpty, folded.isASCII else { return nil }
        var writer = JSONWriter()
        writer.string(folded)
        var escaped = Array(writer.bytes.dropFirst().dropLast())
        ignoringCase = comparison.options.contains(.caseInsensitive)
        if ignoringCase { escaped = escaped.map(Self.lowercased) }
        bytes = escaped
        anchor = escaped.indices.max { Self.rarity(escaped[$0]) < Self.rarity(escaped[$1]) } ?? 0
    }

    /// Whether `hay` holds the needle (ignoring ASCII case when ``ignoringCase``).
    func found(in hay: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count <= hay.count, let base = hay.baseAddress else { return false }
        return bytes.withUnsafeBytes { needle in
            let lastStart = hay.count - bytes.count
            let key = bytes[anchor]
            let other = ignoringCase && key >= UInt8(ascii: "a") && key <= UInt8(ascii: "z") ? key - 0x20 : key
            // The next position of each spelling of the anchor byte, at or after `from`.
            func next(_ byte: UInt8, from: Int) -> Int? {
                let end = lastStart + anchor + 1
                guard from < end, let p = memchr(base + from, Int32(byte), end - from) else { return nil }
                return UnsafeRawPointer(p) - base
            }
            var nextKey = next(key, from: anchor)
            var nextOther = other == key ? nil : next(other, from: anchor)
            while true {
                let position: Int
                switch (nextKey, nextOther) {
                case (let k?, let o?): position = min(k, o)
                case (let k?, nil): position = k
                case (nil, let o?): position = o
                case (nil, nil): return false
                }
                if matches(hay, at: position - anchor, needle) { return true }
                if position == nextKey { nextKey = next(key, from: position + 1) }
                if position == nextOther { nextOther = next(other, from: position + 1) }
            }
        }
    }

    private func matches(_ hay: UnsafeRawBufferPointer, at start: Int, _ needle: UnsafeRawBufferPointer) -> Bool {
        guard ignoringCase else { return memcmp(hay.baseAddress! + start, needle.baseAddress!, needle.count) == 0 }
        for i in 0..<needle.count where Self.lowercased(hay[start + i]) != needle[i] { return false }
        return true
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// How rarely a byte occurs in text (English letter frequencies; JSON's own bytes are common).
    private static func rarity(_ byte: UInt8) -> Int {
        let lower = lowercased(byte)
        if let rank = Array("etaoinshrdlcumwfgypbvkjxqz".utf8).firstIndex(of: lower) { return 10 + rank }
        switch lower {
        case UInt8(ascii: " "), UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: ","), UInt8(ascii: ":"): return 0
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return 12
        default: return 20
        }
    }
}

import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A pull reader over JSON bytes: reads values in place without building a tree.
///
/// Used for the hot path (record files, journal lines, index snapshot), where building a
/// ``JSON`` tree per record would cost an allocation per member.
struct JSONCursor: ~Copyable {
    let bytes: UnsafeBufferPointer<UInt8>
    var index: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        index = 0
    }

    func error(_ message: String) -> JSONSyntaxError { JSONSyntaxError(offset: index, message: message) }

    mutating func skipWhitespace() {
        while index < bytes.count {
            let b = bytes[index]
            guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
            index += 1
        }
    }

    mutating func peek() -> UInt8? {
        skipWhitespace()
        return index < bytes.count ? bytes[index] : nil
    }

    mutating func expect(_ byte: UInt8) throws(JSONSyntaxError) {
        guard peek() == byte else { throw error("expected '\(Character(Unicode.Scalar(byte)))'") }
        index += 1
    }

    /// Calls `body` with each key of an object; `body` must consume the member's value.
    mutating func readObject(_ body: (inout JSONCursor, String) throws(JSONSyntaxError) -> Void) throws(JSONSyntaxError) {
        try readObjectKeys { (c, key) throws(JSONSyntaxError) in try body(&c, key.string) }
    }

    /// Calls `body` with each key of an object as a ``JSONKey`` (no String made for a key without
    /// escapes: the decoders of records, read a million times at an open, compare keys in place);
    /// `body` must consume the member's value.
    mutating func readObjectKeys(_ body: (inout JSONCursor, JSONKey) throws(JSONSyntaxError) -> Void) throws(JSONSyntaxError) {
        try expect(UInt8(ascii: "{"))
        if peek() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            let key = try readKey()
            try expect(UInt8(ascii: ":"))
            try body(&self, key)
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return
            default: throw error("expected ',' or '}'")
            }
        }
    }

    /// The next string as a ``JSONKey``: its bytes in place when it is ASCII without escapes, else
    /// decoded by ``readString()``.
    mutating func readKey() throws(JSONSyntaxError) -> JSONKey {
        guard peek() == UInt8(ascii: "\"") else { throw error("expected a string") }
        var highBits: UInt64 = 0
        let end = plainRunEnd(from: index + 1, highBits: &highBits)
        if end < bytes.count, bytes[end] == UInt8(ascii: "\""), highBits & 0x8080_8080_8080_8080 == 0 {
            let key = JSONKey(bytes: UnsafeBufferPointer(rebasing: bytes[(index + 1)..<end]))
            index = end + 1
            return key
        }
        return JSONKey(string: try readString())
    }

    /// Calls `body` for each element of an array; `body` must consume the element.
    mutating func readArray(_ body: (inout JSONCursor) throws(JSONSyntaxError) -> Void) throws(JSONSyntaxError) {
        try expect(UInt8(ascii: "["))
        if peek() == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            try body(&self)
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return
            default: throw error("expected ',' or ']'")
            }
        }
    }

    mutating func readString() throws(JSONSyntaxError) -> String {
        guard peek() == UInt8(ascii: "\"") else { throw error("expected a string") }
        let start = index + 1
        // Every byte of the string OR-ed together: below 0x80 means ASCII, which needs no validation.
        var highBits: UInt64 = 0
        var i = plainRunEnd(from: start, highBits: &highBits)
        if i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
            let slice = UnsafeBufferPointer(rebasing: bytes[start..<i])
            index = i + 1
            // ASCII cannot be invalid: take the fast conversion; otherwise validate.
            if highBits & 0x8080_8080_8080_8080 == 0 { return String(decoding: slice, as: UTF8.self) }
            guard let s = String(validating: slice, as: UTF8.self) else { throw error("invalid UTF-8") }
            return s
        }
        // Escapes in ASCII text (a note's newlines): decoded in one pass straight into the string's
        // storage, which the escaped length bounds (every escape is at least as long as what it
        // stands for).
        if let end = closingQuote(from: i) {
            var plain = true
            let string = String(unsafeUninitializedCapacity: end - start) { out in
                let written = decodeASCIIEscapes(start..<end, into: out)
                plain = written != nil
                return written ?? 0
            }
            if plain {
                index = end + 1
                return string
            }
        }
        // Other escapes (non-ASCII text, `\u` escapes above ASCII, errors): decode into a buffer,
        // copying the runs between escapes in one go, and validate.
        var utf8: [UInt8] = []
        utf8.reserveCapacity(i - start + 64)
        var runStart = start
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                index = i + 1
                // Escapes only add ASCII, except \u ones, which set highBits below.
                if highBits & 0x8080_8080_8080_8080 == 0 { return String(decoding: utf8, as: UTF8.self) }
                guard let s = String(validating: utf8, as: UTF8.self) else { throw error("invalid UTF-8") }
                return s
            }
            if b < 0x20 { throw JSONSyntaxError(offset: i, message: "control character in string") }
            utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
            guard i + 1 < bytes.count else { break }
            switch bytes[i + 1] {
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "\""): utf8.append(0x22)
            case UInt8(ascii: "\\"): utf8.append(0x5C)
            case UInt8(ascii: "/"): utf8.append(0x2F)
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "u"):
                var scalar = try hex4(at: i + 2)
                i += 6
                if (0xD800..<0xDC00).contains(scalar) {
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw JSONSyntaxError(offset: i, message: "unpaired surrogate")
                    }
                    let low = try hex4(at: i + 2)
                    guard (0xDC00..<0xE000).contains(low) else { throw JSONSyntaxError(offset: i, message: "unpaired surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                }
                guard let u = Unicode.Scalar(scalar) else { throw JSONSyntaxError(offset: i, message: "invalid \\u escape") }
                utf8.append(contentsOf: String(Character(u)).utf8)
                if scalar >= 0x80 { highBits |= 0x80 }
                runStart = i
                i = plainRunEnd(from: i, highBits: &highBits)
                continue
            default:
                throw JSONSyntaxError(offset: i, message: "invalid escape")
            }
            i += 2
            runStart = i
            i = plainRunEnd(from: i, highBits: &highBits)
        }
        throw error("unterminated string")
    }

    /// The index of the first quote at or after `position` that no backslash escapes (memchr,
    /// then the backslashes before it counted); nil when there is none.
    private func closingQuote(from position: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var from = position
        while from < bytes.count, let found = memchr(base + from, 0x22, bytes.count - from) {
            let quote = UnsafeRawPointer(found) - UnsafeRawPointer(base)
            var backslashes = 0
            while quote - backslashes - 1 >= position, bytes[quote - backslashes - 1] == UInt8(ascii: "\\") { backslashes += 1 }
            if backslashes % 2 == 0 { return quote }
            from = quote + 1
        }
        return nil
    }

    /// Decodes `range` (a string's bytes up to its closing quote) into `out` (at least
    /// `range.count` bytes) when it is ASCII with only escapes that stand for ASCII (`\u` ones
    /// below `\u0080`); returns the byte count, or nil for anything else (non-ASCII, a control
    /// character, a bad escape), which ``readString()`` then decodes the careful way.
    ///
    /// Eight bytes at a time: each word is stored whole, and when it holds a backslash, a control
    /// character or a byte above ASCII (found exactly, see ``Self/zeroBytes(_:)``), only the bytes
    /// before the first of them count; that byte is handled next (a note's text has an escaped
    /// newline every few dozen bytes, so the bytes before one are not copied one by one).
    private func decodeASCIIEscapes(_ range: Range<Int>, into out: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        guard let source = bytes.baseAddress, let target = out.baseAddress, out.count >= range.count else { return nil }
        let raw = UnsafeRawPointer(source)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var r = range.lowerBound
        var w = 0
        while r < range.upperBound {
            // The store of a whole word stays inside `out`: `w` never passes `r - range.lowerBound`.
            while r + 8 <= range.upperBound {
                // Little-endian, so that the lowest set bit is the first byte in memory.
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: r, as: UInt64.self))
                let special = Self.zeroBytes(word ^ (ones &* 0x5C)) | Self.zeroBytes(word & (ones &* 0xE0)) | (word & highs)
                UnsafeMutableRawPointer(target + w).storeBytes(of: word.littleEndian, as: UInt64.self)
                if special != 0 {
                    let plain = special.trailingZeroBitCount >> 3
                    r += plain
                    w += plain
                    break
                }
                r += 8
                w += 8
            }
            guard r < range.upperBound else { break }
            let byte = source[r]
            if byte == UInt8(ascii: "\\") {
                guard r + 1 < range.upperBound else { return nil }
                switch source[r + 1] {
                case UInt8(ascii: "n"): target[w] = 0x0A
                case UInt8(ascii: "t"): target[w] = 0x09
                case UInt8(ascii: "r"): target[w] = 0x0D
                case UInt8(ascii: "b"): target[w] = 0x08
                case UInt8(ascii: "f"): target[w] = 0x0C
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): target[w] = source[r + 1]
                case UInt8(ascii: "u"):
                    guard r + 6 <= range.upperBound, let scalar = try? hex4(at: r + 2), scalar < 0x80 else { return nil }
                    target[w] = UInt8(scalar)
                    r += 4
                default: return nil
                }
                r += 2
            } else {
                // A control character or a byte above ASCII: not for this path.
                guard byte >= 0x20, byte < 0x80 else { return nil }
                target[w] = byte
                r += 1
            }
            w += 1
        }
        return w
    }

    /// The high bit of every byte of `x` that is zero, and of no other byte (exact, unlike the
    /// subtract-and-mask test, whose borrow can flag bytes above a zero one).
    @inline(__always)
    static func zeroBytes(_ x: UInt64) -> UInt64 {
        let lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        return ~(((x & lows) &+ lows) | x | lows)
    }

    /// The first index at or after `start` holding a quote, a backslash or a control character
    /// (or the end), OR-ing the bytes before it into `highBits`: eight bytes at a time while none
    /// of them is one of those.
    func plainRunEnd(from start: Int, highBits: inout UInt64) -> Int {
        Self.plainRunEnd(in: bytes, from: start, highBits: &highBits)
    }

    /// ``plainRunEnd(from:highBits:)`` in any bytes: the JSON writer finds what it must escape with it.
    static func plainRunEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int, highBits: inout UInt64) -> Int {
        var i = start
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            while i + 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let quote = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                // A byte is flagged when it is zero (quote, backslash) or below 0x20; a borrow can
                // flag bytes above a flagged one only, and the byte loop below finds the first.
                let special = ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash | (word &- ones &* 0x20) & ~word) & highs
                if special != 0 { break }
                highBits |= word
                i += 8
            }
        }
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") || b < 0x20 { return i }
            highBits |= UInt64(b)
            i += 1
        }
        return i
    }

    /// The four hex digits of a `\\u` escape at `position`.
    private func hex4(at position: Int) throws(JSONSyntaxError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw JSONSyntaxError(offset: position, message: "unexpected end of input") }
        var value: UInt32 = 0
        for c in bytes[position..<position + 4] {
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw JSONSyntaxError(offset: position, message: "invalid \\u escape")
            }
            value = value << 4 | digit
        }
        return value
    }

    /// The text of a number.
    mutating func readNumberText() throws(JSONSyntaxError) -> Substring {
        skipWhitespace()
        let start = index
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
                UInt8(ascii: "e"), UInt8(ascii: "E"):
                index += 1
            default:
                return try numberText(from: start)
            }
        }
        return try numberText(from: start)
    }

    private func numberText(from start: Int) throws(JSONSyntaxError) -> Substring {
        guard index > start else { throw JSONSyntaxError(offset: start, message: "expected a number") }
        return Substring(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    mutating func readInt64() throws(JSONSyntaxError) -> Int64 {
        let text = try readNumberText()
        guard let value = Int64(text) else { throw error("expected an integer") }
        return value
    }

    mutating func readUInt64() throws(JSONSyntaxError) -> UInt64 {
        let text = try readNumberText()
        guard let value = UInt64(text) else { throw error("expected an unsigned integer") }
        return value
    }

    /// A double, also from the strings `NaN`, `Infinity`, `-Infinity`.
    mutating func readDouble() throws(JSONSyntaxError) -> Double {
        if peek() == UInt8(ascii: "\"") {
            switch try readString() {
            case "NaN": return .nan
            case "Infinity": return .infinity
            case "-Infinity": return -.infinity
            default: throw error("expected a number")
            }
        }
        let text = try readNumberText()
        guard let value = Double(text) else { throw error("expected a number") }
        return value
    }

    mutating func readBool() throws(JSONSyntaxError) -> Bool {
        guard case .bool(let b) = try parseTreeValue() else { throw error("expected true or false") }
        return b
    }

    /// Parses one value as a ``JSON`` tree (for rare or irregular parts).
    mutating func parseTreeValue() throws(JSONSyntaxError) -> JSON {
        skipWhitespace()
        let rest = UnsafeBufferPointer(rebasing: bytes[index...])
        var parser = JSONParser(bytes: rest)
        let value = try parser.parseValue(depth: 0)
        index += parser.index
        return value
    }

    mutating func expectEnd() throws(JSONSyntaxError) {
        skipWhitespace()
        guard index == bytes.count else { throw error("trailing characters") }
    }
}

/// An object key as ``JSONCursor/readObjectKeys(_:)`` reads it: ASCII bytes in the cursor's input
/// (valid only while the cursor's bytes are), or a decoded string for one with escapes.
struct JSONKey {
    private let bytes: UnsafeBufferPointer<UInt8>?
    private let decoded: String?

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        decoded = nil
    }

    init(string: String) {
        bytes = nil
        decoded = string
    }

    /// The key as a string (made from the bytes on each call).
    var string: String {
        if let bytes { return String(decoding: bytes, as: UTF8.self) }
        return decoded ?? ""
    }

    /// Whether the key is `name` (an ASCII literal).
    static func == (key: JSONKey, name: StaticString) -> Bool {
        guard let bytes = key.bytes else { return key.decoded == name.description }
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        return bytes.count == 0 || memcmp(bytes.baseAddress!, name.utf8Start, bytes.count) == 0
    }

    /// Whether the key is `name`, byte for byte (a caller that gets false for a key `==` would
    /// call equal, a compatibility spelling of a Unicode name, reads the record the slow way).
    func equals(_ name: String) -> Bool {
        guard let bytes else { return decoded == name }
        var name = name
        return name.withUTF8 { utf8 in
            utf8.count == bytes.count && (bytes.isEmpty || memcmp(bytes.baseAddress!, utf8.baseAddress!, bytes.count) == 0)
        }
    }

    /// For `switch key { case "recordName": … }`.
    static func ~= (name: StaticString, key: JSONKey) -> Bool { key == name }
}

extension Data {
    /// Runs a cursor over these bytes.
    func withJSONCursor<T>(_ body: (inout JSONCursor) throws(JSONSyntaxError) -> T) throws(JSONSyntaxError) -> T {
        let result: Result<T, JSONSyntaxError> = withUnsafeBytes { raw in
            var cursor = JSONCursor(raw.bindMemory(to: UInt8.self))
            do throws(JSONSyntaxError) {
                return .success(try body(&cursor))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

extension Data {
    /// The index of the first `\n` in `range` (memchr).
    func indexOfNewline(in range: Range<Int>) -> Int? {
        guard !range.isEmpty else { return nil }
        return withUnsafeBytes { raw -> Int? in
            guard let base = raw.baseAddress else { return nil }
            let offset = range.lowerBound - startIndex
            guard let found = memchr(base + offset, 0x0A, range.count) else { return nil }
            return startIndex + (UnsafeRawPointer(found) - base)
        }
    }
}

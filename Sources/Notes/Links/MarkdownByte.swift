/// The bytes the note text scanner looks at, and the classes of characters its rules name.
enum MarkdownByte {
    static let tab = UInt8(ascii: "\t")
    static let newline = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let exclamation = UInt8(ascii: "!")
    static let hash = UInt8(ascii: "#")
    static let percent = UInt8(ascii: "%")
    static let openParenthesis = UInt8(ascii: "(")
    static let closeParenthesis = UInt8(ascii: ")")
    static let slash = UInt8(ascii: "/")
    static let lessThan = UInt8(ascii: "<")
    static let greaterThan = UInt8(ascii: ">")
    static let openBracket = UInt8(ascii: "[")
    static let backslash = UInt8(ascii: "\\")
    static let closeBracket = UInt8(ascii: "]")
    static let backtick = UInt8(ascii: "`")
    static let pipe = UInt8(ascii: "|")
    static let tilde = UInt8(ascii: "~")

    /// CommonMark's ASCII punctuation: what a backslash escapes.
    static func isASCIIPunctuation(_ byte: UInt8) -> Bool {
        (0x21...0x2F).contains(byte) || (0x3A...0x40).contains(byte) || (0x5B...0x60).contains(byte) || (0x7B...0x7E).contains(byte)
    }

    static func isSpaceOrTab(_ byte: UInt8) -> Bool {
        byte == space || byte == tab
    }

    static func isASCIIDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte)
    }

    static func isASCIILetter(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    /// The Unicode scalar whose UTF-8 encoding starts at `index`, and its length in bytes; nil at
    /// the end of the bytes or at bytes that are no valid UTF-8.
    static func scalar(at index: Int, in bytes: UnsafeBufferPointer<UInt8>) -> (scalar: Unicode.Scalar, length: Int)? {
        guard index < bytes.count else { return nil }
        let lead = bytes[index]
        if lead < 0x80 { return (Unicode.Scalar(lead), 1) }
        let length: Int
        var value: UInt32
        switch lead {
        case 0xC2...0xDF: (length, value) = (2, UInt32(lead & 0x1F))
        case 0xE0...0xEF: (length, value) = (3, UInt32(lead & 0x0F))
        case 0xF0...0xF4: (length, value) = (4, UInt32(lead & 0x07))
        default: return nil
        }
        guard index + length <= bytes.count else { return nil }
        for offset in 1..<length {
            let byte = bytes[index + offset]
            guard byte & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        let smallest: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x1_0000  // longer is overlong
        guard value >= smallest, let scalar = Unicode.Scalar(value) else { return nil }
        return (scalar, length)
    }

    /// The Unicode scalar that ends right before `end`; nil when the bytes there are no valid UTF-8.
    static func scalar(before end: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Unicode.Scalar? {
        var start = end - 1
        while start > 0 && end - start < 4 && bytes[start] & 0xC0 == 0x80 { start -= 1 }
        guard start >= 0, let decoded = scalar(at: start, in: bytes), start + decoded.length == end else { return nil }
        return decoded.scalar
    }

    /// The text of `range`, with backslash escapes undone and then percent-escapes decoded; the
    /// percent-escapes stay as written when they would decode to invalid UTF-8.
    static func decodedDestination(_ range: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>) -> String {
        var unescaped: [UInt8] = []
        unescaped.reserveCapacity(range.count)
        var index = range.lowerBound
        while index < range.upperBound {
            if bytes[index] == backslash && index + 1 < range.upperBound && isASCIIPunctuation(bytes[index + 1]) { index += 1 }
            unescaped.append(bytes[index])
            index += 1
        }
        guard unescaped.contains(percent) else { return String(decoding: unescaped, as: UTF8.self) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(unescaped.count)
        index = 0
        while index < unescaped.count {
            if unescaped[index] == percent, index + 2 < unescaped.count, let high = hexValue(unescaped[index + 1]),
                let low = hexValue(unescaped[index + 2])
            {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(unescaped[index])
                index += 1
            }
        }
        return String(validating: decoded, as: UTF8.self) ?? String(decoding: unescaped, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

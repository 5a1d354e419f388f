/// Stepping over a value the decoder does not keep, checked as the tree parser would check it but
/// with nothing made: no string, no number text, no tree. A record file's read skips what the
/// index already holds this way (see ``RecordCoding/decodeFields(_:of:from:)``).
extension JSONCursor {
    /// Steps over one value; throws where ``parseTreeValue()`` would throw.
    mutating func skipValue() throws(JSONSyntaxError) { try skipValue(depth: 0) }

    private mutating func skipValue(depth: Int) throws(JSONSyntaxError) {
        guard depth < 512 else { throw error("nested too deeply") }
        switch peek() {
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "{"):
            try readObjectKeys { (c, _) throws(JSONSyntaxError) in try c.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["):
            try readArray { (c) throws(JSONSyntaxError) in try c.skipValue(depth: depth + 1) }
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"), nil:
            // Rare in a record: the tree parser's own checks.
            _ = try parseTreeValue()
        default:
            try skipNumber()
        }
    }

    /// A string of ASCII with the short escapes (every string the writer writes but text above
    /// ASCII) is stepped over here; anything else is read by ``readString()``, which checks UTF-8
    /// and `\u` escapes.
    private mutating func skipString() throws(JSONSyntaxError) {
        let start = index
        var highBits: UInt64 = 0
        var i = plainRunEnd(from: index + 1, highBits: &highBits)
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "\""):
                guard highBits & 0x8080_8080_8080_8080 == 0 else { break }
                index = i + 1
                return
            case UInt8(ascii: "\\") where i + 1 < bytes.count:
                switch bytes[i + 1] {
                case UInt8(ascii: "n"), UInt8(ascii: "t"), UInt8(ascii: "r"), UInt8(ascii: "\""), UInt8(ascii: "\\"),
                    UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"):
                    i = plainRunEnd(from: i + 2, highBits: &highBits)
                    continue
                default: break
                }
            default: break
            }
            break
        }
        index = start
        _ = try readString()
    }

    /// A number of JSON's form (`-`, digits, a fraction, an exponent) is stepped over here; other
    /// text made of number characters is checked as the tree parser checks it (`Double(text)`).
    private mutating func skipNumber() throws(JSONSyntaxError) {
        let start = index
        func digits() -> Bool {
            let from = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            return index > from
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        var plain = digits()
        if plain, index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            plain = digits()
        }
        if plain, index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            plain = digits()
        }
        let atEnd =
            index == bytes.count
            || !(bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9") || bytes[index] == UInt8(ascii: "-")
                || bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: ".") || bytes[index] | 0x20 == UInt8(ascii: "e"))
        if plain, atEnd { return }
        index = start
        _ = try parseTreeValue()
    }
}

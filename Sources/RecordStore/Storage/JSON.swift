import Foundation

/// A parsed JSON value. The store's own small parser: exact integers, no Foundation bridging.
enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    /// The number's text as written, so int64 values keep every digit.
    case number(String)
    case string(String)
    case array([JSON])
    /// Members in document order (objects here are small: a linear search beats hashing).
    case object([JSONMember])

    /// The value of the first member named `key`.
    subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        for member in members where member.key == key { return member.value }
        return nil
    }

    var string: String? { if case .string(let s) = self { s } else { nil } }
    var object: [JSONMember]? { if case .object(let o) = self { o } else { nil } }
    var array: [JSON]? { if case .array(let a) = self { a } else { nil } }
    var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
    var int64: Int64? { if case .number(let n) = self { Int64(n) } else { nil } }
    var uint64: UInt64? { if case .number(let n) = self { UInt64(n) } else { nil } }
    var double: Double? {
        switch self {
        case .number(let n): Double(n)
        case .string("NaN"): .nan
        case .string("Infinity"): .infinity
        case .string("-Infinity"): -.infinity
        default: nil
        }
    }
}

/// One `"key": value` of a JSON object.
struct JSONMember: Sendable, Equatable {
    var key: String
    var value: JSON
}

/// Why a JSON text could not be parsed, with the byte offset.
struct JSONSyntaxError: Error, CustomStringConvertible {
    var offset: Int
    var message: String
    var description: String { "invalid JSON at byte \(offset): \(message)" }
}

extension JSON {
    /// Parses one JSON text (surrounding whitespace allowed).
    static func parse(_ data: Data) throws(JSONSyntaxError) -> JSON {
        let result: Result<JSON, JSONSyntaxError> = data.withUnsafeBytes { raw in
            var parser = JSONParser(bytes: raw.bindMemory(to: UInt8.self))
            do throws(JSONSyntaxError) {
                let value = try parser.parseValue(depth: 0)
                parser.skipWhitespace()
                if parser.index != parser.bytes.count { throw parser.error("trailing characters") }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    static func parse(_ text: String) throws(JSONSyntaxError) -> JSON { try parse(Data(text.utf8)) }
}

struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    func error(_ message: String) -> JSONSyntaxError { JSONSyntaxError(offset: index, message: message) }

    mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
    }

    mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSON {
        guard depth < 512 else { throw error("nested too deeply") }
        skipWhitespace()
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectWord("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectWord("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character")
        }
    }

    mutating func expectWord(_ word: StaticString) throws(JSONSyntaxError) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("unexpected end of input") }
        for i in 0..<count where bytes[index + i] != word.utf8Start[i] { throw error("invalid literal") }
        index += count
    }

    mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSON {
        index += 1
        var members: [JSONMember] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a key") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            members.append(JSONMember(key: key, value: try parseValue(depth: depth + 1)))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            throw error("expected ',' or '}'")
        }
    }

    mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSON {
        index += 1
        var items: [JSON] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            items.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            throw error("expected ',' or ']'")
        }
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> JSON {
        let start = index
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"),
                UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                index += 1
            default:
                return try number(from: start)
            }
        }
        return try number(from: start)
    }

    func number(from start: Int) throws(JSONSyntaxError) -> JSON {
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard Double(text) != nil else { throw JSONSyntaxError(offset: start, message: "invalid number") }
        return .number(text)
    }

    /// One string, decoded by the same code as the cursor's (``JSONCursor/readString()``).
    mutating func parseString() throws(JSONSyntaxError) -> String {
        var cursor = JSONCursor(bytes)
        cursor.index = index
        let string = try cursor.readString()
        index = cursor.index
        return string
    }
}

/// Appends JSON text to a byte buffer: deterministic, keys in the order given, UTF-8 as is.
struct JSONWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// Appends JSON already encoded by another writer.
    mutating func raw(_ encoded: [UInt8]) { bytes.append(contentsOf: encoded) }

    mutating func string(_ s: String) {
        var text = s
        text.withUTF8 { utf8 in
            // Room for the text and its quotes at once (escapes may add a little), grown
            // geometrically: a note's text would otherwise regrow the buffer several times.
            let needed = bytes.count + utf8.count + 2
            if needed > bytes.capacity { bytes.reserveCapacity(Swift.max(needed + needed / 16, bytes.capacity * 2)) }
            bytes.append(UInt8(ascii: "\""))
            // Copy runs that need no escaping in one append, each found eight bytes at a time.
            var runStart = 0
            var highBits: UInt64 = 0  // not needed here
            while true {
                let end = JSONCursor.plainRunEnd(in: utf8, from: runStart, highBits: &highBits)
                if end > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<end])) }
                guard end < utf8.count else { break }
                escape(utf8[end])
                runStart = end + 1
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case 0x22: raw("\\\"")
        case 0x5C: raw("\\\\")
        case 0x0A: raw("\\n")
        case 0x0D: raw("\\r")
        case 0x09: raw("\\t")
        default:
            raw("\\u00")
            bytes.append(Self.hexDigit(byte >> 4))
            bytes.append(Self.hexDigit(byte & 0xF))
        }
    }

    mutating func number(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        number(value.magnitude)
    }

    /// Decimal digits written straight into the buffer (no String made: a snapshot line has two
    /// or three numbers, and a checkpoint writes a line for every record).
    mutating func number(_ value: UInt64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var rest = value
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Finite doubles as the shortest text that reads back exactly; others as strings.
    mutating func number(_ value: Double) {
        if value.isNaN {
            raw("\"NaN\"")
        } else if value == .infinity {
            raw("\"Infinity\"")
        } else if value == -.infinity {
            raw("\"-Infinity\"")
        } else {
            raw(value.description)
        }
    }

    mutating func bool(_ value: Bool) { value ? raw("true") : raw("false") }

    /// A member's name (`,` before all but the first, then `"k":`): a name of the format, written
    /// as it is (ASCII, nothing to escape).
    mutating func key(_ k: StaticString, first: inout Bool) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        raw(k)
        raw("\":")
    }

    /// A member's name that comes from the data (a field's key), escaped as any string.
    mutating func key(named k: String, first: inout Bool) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        string(k)
        bytes.append(UInt8(ascii: ":"))
    }

    private static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? 0x30 + v : 0x61 + v - 10 }
}

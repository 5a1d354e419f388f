import Foundation

/// `bytea` values in PostgreSQL's hex text format (`\x0a1b…`), for text parameters and results.
public enum Bytea {
    /// The hex text form of `data`.
    public static func encode(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8](repeating: 0, count: 2 + data.count * 2)
        text[0] = UInt8(ascii: "\\")
        text[1] = UInt8(ascii: "x")
        for (i, byte) in data.enumerated() {
            text[2 + 2 * i] = digits[Int(byte >> 4)]
            text[3 + 2 * i] = digits[Int(byte & 15)]
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of a hex text form; nil for anything else (the server's `bytea_output` is `hex`
    /// by default since PostgreSQL 9.0).
    public static func decode(_ text: String) -> Data? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"), utf8.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var data = Data(capacity: (utf8.count - 2) / 2)
        var i = 2
        while i < utf8.count {
            guard let high = nibble(utf8[i]), let low = nibble(utf8[i + 1]) else { return nil }
            data.append(high << 4 | low)
            i += 2
        }
        return data
    }
}

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// What in a record file's raw bytes can make a string field match an ASCII needle that the
/// needle's JSON form (as ``JSONWriter`` writes it) does not find in those bytes.
///
/// Two things can: a non-ASCII character that the predicate's comparison treats as ASCII
/// (case folding, `[c]`, maps U+212A KELVIN SIGN to `k`, U+017F LONG S to `s`, U+FB01 to `fi`;
/// Swift's canonical equivalence, used by `==` and `BEGINSWITH`, makes U+212A equal to `K`), and a
/// JSON escape the writer never writes (`\u0041` for `A`, `\/`), which the reader decodes to what
/// the needle is made of. A file holding either is always decoded and tested.
enum RawJSONHazards {
    /// Every scalar above ASCII whose case folding (`String.folding(options: .caseInsensitive)`) or
    /// canonical composition holds an ASCII scalar: `ß`→`ss`, `İ`→`i̇`, `ŉ`→`ʼn`, `ſ`→`s`, `ǰ`,
    /// `;` (U+037E), `ẖ ẗ ẘ ẙ ẚ`, `ẞ`→`ss`, `` ` `` (U+1FEF), `K` (U+212A), `ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ`.
    /// Found by folding every scalar (a test does it again, so a Foundation that folds more fails it).
    static let scalarsFoldingToASCII: Set<UInt32> = [
        0xDF, 0x130, 0x149, 0x17F, 0x1F0, 0x37E, 0x1E96, 0x1E97, 0x1E98, 0x1E99, 0x1E9A, 0x1E9E, 0x1FEF, 0x212A,
        0xFB00, 0xFB01, 0xFB02, 0xFB03, 0xFB04, 0xFB05, 0xFB06,
    ]

    /// Whether `bytes` hold a hazard: a scalar of ``scalarsFoldingToASCII`` or an escape the
    /// writer does not write.
    static func present(in bytes: UnsafeRawBufferPointer) -> Bool {
        hasScalarFoldingToASCII(bytes) || hasForeignEscape(bytes)
    }

    /// Whether a backslash in `bytes` starts an escape other than the writer's `\" \\ \n \r \t` and
    /// `\u00xx` (lowercase hex) for the other control characters.
    static func hasForeignEscape(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        var i = 0
        while i < bytes.count {
            guard let found = memchr(base + i, 0x5C, bytes.count - i) else { return false }
            i = UnsafeRawPointer(found) - base
            guard i + 1 < bytes.count else { return true }
            switch bytes[i + 1] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                i += 2
            case UInt8(ascii: "u"):
                guard i + 6 <= bytes.count, bytes[i + 2] == UInt8(ascii: "0"), bytes[i + 3] == UInt8(ascii: "0"),
                    let high = lowercaseHex(bytes[i + 4]), let low = lowercaseHex(bytes[i + 5])
                else { return true }
                let value = high << 4 | low
                if value >= 0x20 || value == 0x0A || value == 0x0D || value == 0x09 { return true }
                i += 6
            default:
                return true
            }
        }
        return false
    }

    private static func lowercaseHex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// Whether `bytes` hold the UTF-8 of a scalar in ``scalarsFoldingToASCII`` (all of them take two
    /// or three bytes). Pure ASCII is ruled out eight bytes at a time.
    static func hasScalarFoldingToASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        let count = bytes.count
        while i + 8 <= count, bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 { i += 8 }
        while i < count {
            let lead = bytes[i]
            if lead < 0xC0 {
                i += 1
                continue
            }
            if lead < 0xE0, i + 1 < count {
                let scalar = UInt32(lead & 0x1F) << 6 | UInt32(bytes[i + 1] & 0x3F)
                if scalarsFoldingToASCII.contains(scalar) { return true }
            } else if lead < 0xF0, i + 2 < count {
                let scalar = UInt32(lead & 0x0F) << 12 | UInt32(bytes[i + 1] & 0x3F) << 6 | UInt32(bytes[i + 2] & 0x3F)
                if scalarsFoldingToASCII.contains(scalar) { return true }
            }
            i += 1
        }
        return false
    }
}

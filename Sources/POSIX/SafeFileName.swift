/// A name (a record name, say) → a file name that no name can turn into a path elsewhere: the
/// one encoding of names into files, used by the record store's `records/` and the sync engine's
/// `sync/records/`.
///
/// Bytes `A-Z a-z 0-9 - _` of the name's UTF-8 are kept; every other byte (including `.`, `/`,
/// `%` and NUL) becomes `%xx` in lowercase hex, so a file name never holds a path separator, is
/// never `.` or `..` and never starts with a dot; two names kept whole never share a file name.
/// A name whose encoding is longer than ``longestWholeName`` bytes keeps a 100-byte prefix of
/// it, then `~` and a 128-bit hash of the whole name (two FNV-1a 64 hashes): at most 133 bytes,
/// well under `NAME_MAX`. Whoever reads a file must check the name stored inside it, which is
/// the truth: the file name is only where to look.
public enum SafeFileName {
    /// The longest encoded name kept whole (longer ones are cut and hashed).
    public static let longestWholeName = 160
    /// How much of a longer encoding is kept before the `~` and hash.
    public static let cutPrefixLength = 100

    /// The file name of `name` (without any suffix).
    public static func fileName(for name: String) -> String {
        var encoded: [UInt8] = []
        encoded.reserveCapacity(name.utf8.count * 3)
        encode(name) { encoded.append($0) }
        guard encoded.count > longestWholeName else { return String(decoding: encoded, as: UTF8.self) }
        var prefix = Array(encoded.prefix(cutPrefixLength))
        // Do not cut a %xx escape in half.
        if let last = prefix.lastIndex(of: UInt8(ascii: "%")), last >= prefix.count - 2 { prefix.removeSubrange(last...) }
        return String(decoding: prefix, as: UTF8.self) + "~" + hex64(hash1(name)) + hex64(hash2(name))
    }

    /// Writes the encoding of `name` byte by byte, whole (not cut): for building a path without
    /// allocating; the caller cuts at ``longestWholeName`` and then uses ``fileName(for:)``.
    @inlinable
    public static func encode(_ name: String, _ write: (UInt8) -> Void) {
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                write(byte)
            default:
                write(UInt8(ascii: "%"))
                write(hexDigit(byte >> 4))
                write(hexDigit(byte & 0xF))
            }
        }
    }

    /// The name encoded by ``fileName(for:)``, when it was kept whole; nil for a cut one (or a
    /// file name this encoding does not make).
    public static func name(ofFileName fileName: String) -> String? {
        var bytes: [UInt8] = []
        var utf8 = fileName.utf8.makeIterator()
        while let byte = utf8.next() {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                bytes.append(byte)
            case UInt8(ascii: "%"):
                guard let high = utf8.next().flatMap(hexValue), let low = utf8.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            default:
                return nil
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// FNV-1a 64 of `bytes` from `seed`: the hash of cut names, and the record store's shard.
    @inlinable
    public static func fnv1a64(_ bytes: some Sequence<UInt8>, seed: UInt64) -> UInt64 {
        var hash = seed
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return hash
    }

    /// The first seed (FNV-1a's offset basis) and the second.
    public static let seed1: UInt64 = 0xcbf2_9ce4_8422_2325
    public static let seed2: UInt64 = 0x6c62_272e_07bb_0142

    static func hash1(_ name: String) -> UInt64 { fnv1a64(name.utf8, seed: seed1) }
    static func hash2(_ name: String) -> UInt64 { fnv1a64(name.utf8, seed: seed2) }

    /// The lowercase hex digit of `value` (0-15).
    @inlinable
    public static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    private static func hex64(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

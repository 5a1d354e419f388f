/// Record name → file path inside `records/`, by an encoding that untrusted names cannot escape.
///
/// Bytes `A-Z a-z 0-9 - _` are kept; every other byte (including `.`, `/`, `%` and NUL) becomes
/// `%XX`, so a file name never contains a path separator and never starts with a dot. Names whose
/// encoding exceeds 160 bytes keep a 100-byte prefix plus `~` and a 128-bit hash of the whole name.
/// Files sit in 256 shard directories chosen by hash. The record name inside the JSON is the truth;
/// the file name is only where to look.
enum RecordFileName {
    static func relativePath(for recordName: String) -> String {
        "records/\(hex(shard(of: recordName)))/\(fileName(for: recordName)).json"
    }

    /// The shard directory (`records/xx`, `xx` its number in hex) that holds the record's file.
    static func shard(of recordName: String) -> UInt8 {
        UInt8(truncatingIfNeeded: fnv1a64(recordName.utf8, seed: 0xcbf2_9ce4_8422_2325) >> 56)
    }

    static func fileName(for recordName: String) -> String {
        if let whole = withWholeName(recordName, suffix: "", { String(cString: $0) }) { return whole }
        var encoded: [UInt8] = []
        encoded.reserveCapacity(recordName.utf8.count * 3)
        encode(recordName) { encoded.append($0) }
        let h1 = fnv1a64(recordName.utf8, seed: 0xcbf2_9ce4_8422_2325)
        let h2 = fnv1a64(recordName.utf8, seed: 0x6c62_272e_07bb_0142)
        var prefix = Array(encoded.prefix(100))
        // Do not cut a %XX escape in half.
        if let last = prefix.lastIndex(of: UInt8(ascii: "%")), last >= prefix.count - 2 { prefix.removeSubrange(last...) }
        return String(decoding: prefix, as: UTF8.self) + "~" + hex64(h1) + hex64(h2)
    }

    /// The longest encoded name kept whole (longer ones are cut and hashed).
    static let longestWholeName = 160

    /// Calls `body` with the file's path as a C string, without allocating: relative to its shard
    /// directory (`NAME.json`), or with `inShard` false to `records/` (`xx/NAME.json`). Nil for a
    /// name whose encoding is cut and hashed (rare: then build the path with ``relativePath(for:)``).
    static func withFilePath<R>(for recordName: String, inShard: Bool, _ body: (UnsafePointer<CChar>) -> R) -> R? {
        withWholeName(recordName, shardPrefix: !inShard, suffix: ".json", body)
    }

    /// `body` of the encoded name (after `xx/` with `shardPrefix`) plus `suffix` as a C string;
    /// nil when the name is not kept whole.
    private static func withWholeName<R>(
        _ recordName: String, shardPrefix: Bool = false, suffix: StaticString, _ body: (UnsafePointer<CChar>) -> R
    ) -> R? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 3 + longestWholeName + suffix.utf8CodeUnitCount + 1) { buffer -> R? in
            var count = 0
            func append(_ byte: UInt8) {
                buffer[count] = CChar(bitPattern: byte)
                count += 1
            }
            if shardPrefix {
                let shard = shard(of: recordName)
                append(hexDigits.utf8Start[Int(shard >> 4)])
                append(hexDigits.utf8Start[Int(shard & 0xF)])
                append(UInt8(ascii: "/"))
            }
            var encoded = 0
            encode(recordName) { byte in
                if encoded < longestWholeName { append(byte) }
                encoded += 1
            }
            guard encoded <= longestWholeName else { return nil }
            for i in 0..<suffix.utf8CodeUnitCount { append(suffix.utf8Start[i]) }
            buffer[count] = 0
            return body(UnsafePointer(buffer.baseAddress!))
        }
    }

    private static let hexDigits: StaticString = "0123456789abcdef"

    /// Writes the encoding of `recordName` byte by byte.
    private static func encode(_ recordName: String, _ write: (UInt8) -> Void) {
        for byte in recordName.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                write(byte)
            default:
                write(UInt8(ascii: "%"))
                write(hexDigits.utf8Start[Int(byte >> 4)])
                write(hexDigits.utf8Start[Int(byte & 0xF)])
            }
        }
    }

    static func fnv1a64(_ bytes: some Sequence<UInt8>, seed: UInt64) -> UInt64 {
        var hash = seed
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return hash
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
    }

    private static func hex64(_ value: UInt64) -> String {
        let s = String(value, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
}

/// Record name → file path inside `records/`, by an encoding that untrusted names cannot escape.
///
/// Bytes `A-Z a-z 0-9 - _` are kept; every other byte (including `.`, `/`, `%` and NUL) becomes
/// `%XX`, so a file name never contains a path separator and never starts with a dot. Names whose
/// encoding exceeds 160 bytes keep a 100-byte prefix plus `~` and a 128-bit hash of the whole name.
/// Files sit in 256 shard directories chosen by hash. The record name inside the JSON is the truth;
/// the file name is only where to look.
enum RecordFileName {
    static func relativePath(for recordName: String) -> String {
        let hash = fnv1a64(recordName.utf8, seed: 0xcbf2_9ce4_8422_2325)
        let shard = hex(UInt8(truncatingIfNeeded: hash >> 56))
        return "records/\(shard)/\(fileName(for: recordName)).json"
    }

    static func fileName(for recordName: String) -> String {
        var encoded: [UInt8] = []
        encoded.reserveCapacity(recordName.utf8.count)
        for byte in recordName.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                encoded.append(byte)
            default:
                encoded.append(UInt8(ascii: "%"))
                encoded.append(contentsOf: hex(byte).utf8)
            }
        }
        if encoded.count > 160 {
            let h1 = fnv1a64(recordName.utf8, seed: 0xcbf2_9ce4_8422_2325)
            let h2 = fnv1a64(recordName.utf8, seed: 0x6c62_272e_07bb_0142)
            var prefix = Array(encoded.prefix(100))
            // Do not cut a %XX escape in half.
            if let last = prefix.lastIndex(of: UInt8(ascii: "%")), last >= prefix.count - 2 { prefix.removeSubrange(last...) }
            return String(decoding: prefix, as: UTF8.self) + "~" + hex64(h1) + hex64(h2)
        }
        return String(decoding: encoded, as: UTF8.self)
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

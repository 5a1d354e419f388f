import POSIX

/// Record name → file path inside `records/`: the record's name as ``SafeFileName`` encodes it,
/// plus `.json`, in one of 256 shard directories chosen by a hash of the name. The record name
/// inside the JSON is the truth; the file name is only where to look.
enum RecordFileName {
    static func relativePath(for recordName: String) -> String {
        let shard = shard(of: recordName)
        let digits = [SafeFileName.hexDigit(shard >> 4), SafeFileName.hexDigit(shard & 0xF)]
        return "records/\(String(decoding: digits, as: UTF8.self))/\(fileName(for: recordName)).json"
    }

    /// The shard directory (`records/xx`, `xx` its number in hex) that holds the record's file.
    static func shard(of recordName: String) -> UInt8 {
        UInt8(truncatingIfNeeded: SafeFileName.fnv1a64(recordName.utf8, seed: SafeFileName.seed1) >> 56)
    }

    static func fileName(for recordName: String) -> String { SafeFileName.fileName(for: recordName) }

    /// Calls `body` with the file's path as a C string, without allocating: relative to its shard
    /// directory (`NAME.json`), or with `inShard` false to `records/` (`xx/NAME.json`). Nil for a
    /// name whose encoding is cut and hashed (rare: then build the path with ``relativePath(for:)``).
    static func withFilePath<R>(for recordName: String, inShard: Bool, _ body: (UnsafePointer<CChar>) -> R) -> R? {
        let suffix: StaticString = ".json"
        let longest = SafeFileName.longestWholeName
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 3 + longest + suffix.utf8CodeUnitCount + 1) { buffer -> R? in
            var count = 0
            func append(_ byte: UInt8) {
                buffer[count] = CChar(bitPattern: byte)
                count += 1
            }
            if !inShard {
                let shard = shard(of: recordName)
                append(SafeFileName.hexDigit(shard >> 4))
                append(SafeFileName.hexDigit(shard & 0xF))
                append(UInt8(ascii: "/"))
            }
            var encoded = 0
            SafeFileName.encode(recordName) { byte in
                if encoded < longest { append(byte) }
                encoded += 1
            }
            guard encoded <= longest else { return nil }
            for i in 0..<suffix.utf8CodeUnitCount { append(suffix.utf8Start[i]) }
            buffer[count] = 0
            return body(UnsafePointer(buffer.baseAddress!))
        }
    }
}

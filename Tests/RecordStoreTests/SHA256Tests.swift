import Foundation
import TestSupport
import Testing

@testable import RecordStore

@Suite("SHA-256")
struct SHA256Tests {
    static let vectors: [(input: String, hex: String)] = [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
        (
            "The quick brown fox jumps over the lazy dog",
            "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"
        ),
    ]

    @Test(arguments: vectors)
    func knownVector(_ vector: (input: String, hex: String)) {
        let data = Data(vector.input.utf8)
        #expect(SHA256.hexDigest(data) == vector.hex)
        #expect(SHA256.hex(SHA256.hash(Array(vector.input.utf8))) == vector.hex)
        // A non-contiguous sequence goes through the copying path.
        #expect(SHA256.hex(SHA256.hash(vector.input.utf8.lazy.map { $0 })) == vector.hex)
    }

    @Test func oneMillionA() {
        let data = Data(repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(SHA256.hexDigest(data) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Lengths around the padding boundaries (55/56 and 119/120 bytes need one or two padding blocks),
    /// fed one byte at a time, equal the one-shot digest.
    @Test(arguments: [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000])
    func paddingBoundaries(_ length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var hasher = SHA256.Hasher()
        for byte in bytes { withUnsafeBytes(of: byte) { hasher.update($0) } }
        #expect(hasher.finalize() == SHA256.hash(Data(bytes)))
    }

    /// Chunk sizes cycled over a 1000-byte message, splitting blocks at awkward places.
    @Test(arguments: [[1], [3, 61], [63, 1, 64], [64, 64], [7, 120, 13, 200], [55, 1, 8], [0, 5, 0]])
    func streamingMatchesOneShot(_ splits: [Int]) {
        let total = 1000
        let data = Data((0..<total).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) })
        var hasher = SHA256.Hasher()
        var offset = 0
        var i = 0
        while offset < total {
            let n = min(splits[i % splits.count], total - offset)
            hasher.update(data.subdata(in: offset..<(offset + n)))
            offset += n
            i += 1
        }
        #expect(hasher.finalize() == SHA256.hash(data))
    }

    @Test func streamingMillionAInOddChunks() {
        var hasher = SHA256.Hasher()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 997)
        var remaining = 1_000_000
        while remaining > 0 {
            let n = min(chunk.count, remaining)
            chunk.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            remaining -= n
        }
        #expect(SHA256.hex(hasher.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func finalizeResets() {
        var hasher = SHA256.Hasher()
        hasher.update(Data("abc".utf8))
        _ = hasher.finalize()
        #expect(SHA256.hex(hasher.finalize()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }
}

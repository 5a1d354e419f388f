import Foundation

/// SHA-256 (FIPS 180-4), for content-addressed assets: Linux has no Foundation crypto.
///
/// One-shot: ``hash(_:)-(Data)`` and ``hexDigest(_:)``; streaming: ``Hasher``.
package enum SHA256 {
    /// The digest length in bytes.
    package static let digestByteCount = 32
    /// The block length in bytes.
    package static let blockByteCount = 64

    /// The 32-byte digest of `data`.
    package static func hash(_ data: Data) -> [UInt8] {
        var hasher = Hasher()
        hasher.update(data)
        return hasher.finalize()
    }

    /// The 32-byte digest of `bytes`.
    package static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hasher = Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The lower-case hex digest of `data` (64 characters), as ``Asset/sha256`` stores it.
    package static func hexDigest(_ data: Data) -> String {
        hex(hash(data))
    }

    /// The lower-case hex digest of `bytes`.
    package static func hexDigest(_ bytes: some Sequence<UInt8>) -> String {
        hex(hash(bytes))
    }

    /// Lower-case hex of `bytes`.
    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Incremental SHA-256: feed any number of ``update(_:)-(UnsafeRawBufferPointer)`` calls, then ``finalize()`` once.
    package struct Hasher: Sendable {
        private var h0: UInt32 = 0x6a09_e667
        private var h1: UInt32 = 0xbb67_ae85
        private var h2: UInt32 = 0x3c6e_f372
        private var h3: UInt32 = 0xa54f_f53a
        private var h4: UInt32 = 0x510e_527f
        private var h5: UInt32 = 0x9b05_688c
        private var h6: UInt32 = 0x1f83_d9ab
        private var h7: UInt32 = 0x5be0_cd19
        /// A partial block waiting for more input; only the first `pendingCount` bytes are meaningful.
        private var pending = [UInt8](repeating: 0, count: SHA256.blockByteCount)
        private var pendingCount = 0
        /// Total message length in bytes so far.
        private var length: UInt64 = 0

        package init() {}

        /// Feeds `bytes`.
        package mutating func update(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, bytes.count > 0 else { return }
            length &+= UInt64(bytes.count)
            var offset = 0
            let count = bytes.count
            // Top up a pending partial block first.
            if pendingCount > 0 {
                let take = min(SHA256.blockByteCount - pendingCount, count)
                pending.withUnsafeMutableBytes { dst in
                    dst.baseAddress!.advanced(by: pendingCount).copyMemory(from: base, byteCount: take)
                }
                pendingCount += take
                offset = take
                if pendingCount < SHA256.blockByteCount { return }
                let block = pending
                block.withUnsafeBytes { compress(blocks: $0) }
                pendingCount = 0
            }
            // Whole blocks straight from the input.
            let whole = (count - offset) / SHA256.blockByteCount * SHA256.blockByteCount
            if whole > 0 {
                compress(blocks: UnsafeRawBufferPointer(start: base.advanced(by: offset), count: whole))
                offset += whole
            }
            // Keep the tail.
            let rest = count - offset
            if rest > 0 {
                pending.withUnsafeMutableBytes { dst in
                    dst.baseAddress!.copyMemory(from: base.advanced(by: offset), byteCount: rest)
                }
                pendingCount = rest
            }
        }

        /// Feeds `data`.
        package mutating func update(_ data: Data) {
            data.withUnsafeBytes { update($0) }
        }

        /// Feeds `bytes` (contiguous collections are read in place; others are copied in chunks).
        package mutating func update(_ bytes: some Sequence<UInt8>) {
            let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
                update(UnsafeRawBufferPointer(buffer))
            }
            if done != nil { return }
            var chunk = [UInt8]()
            chunk.reserveCapacity(4096)
            for byte in bytes {
                chunk.append(byte)
                if chunk.count == 4096 {
                    chunk.withUnsafeBytes { update($0) }
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            chunk.withUnsafeBytes { update($0) }
        }

        /// Pads the message and returns the 32-byte digest. The hasher must not be used afterwards
        /// (it is reset, so further use starts a new, unrelated digest).
        package mutating func finalize() -> [UInt8] {
            let bitLength = length &* 8
            var tail = [UInt8](repeating: 0, count: pendingCount < 56 ? 64 : 128)
            for i in 0..<pendingCount { tail[i] = pending[i] }
            tail[pendingCount] = 0x80
            for i in 0..<8 {
                tail[tail.count - 1 - i] = UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(i)))
            }
            tail.withUnsafeBytes { compress(blocks: $0) }
            var digest = [UInt8]()
            digest.reserveCapacity(SHA256.digestByteCount)
            for word in [h0, h1, h2, h3, h4, h5, h6, h7] {
                digest.append(UInt8(truncatingIfNeeded: word >> 24))
                digest.append(UInt8(truncatingIfNeeded: word >> 16))
                digest.append(UInt8(truncatingIfNeeded: word >> 8))
                digest.append(UInt8(truncatingIfNeeded: word))
            }
            self = Hasher()
            return digest
        }

        /// Runs the compression function over `blocks`, whose length is a multiple of 64.
        private mutating func compress(blocks: UnsafeRawBufferPointer) {
            var a0 = h0, b0 = h1, c0 = h2, d0 = h3, e0 = h4, f0 = h5, g0 = h6, hh0 = h7
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                SHA256.roundConstants.withUnsafeBufferPointer { k in
                    var blockStart = 0
                    while blockStart < blocks.count {
                        for t in 0..<16 {
                            w[t] = UInt32(
                                bigEndian: blocks.loadUnaligned(fromByteOffset: blockStart + 4 * t, as: UInt32.self))
                        }
                        for t in 16..<64 {
                            let x = w[t - 15], y = w[t - 2]
                            let s0 = rotr(x, 7) ^ rotr(x, 18) ^ (x >> 3)
                            let s1 = rotr(y, 17) ^ rotr(y, 19) ^ (y >> 10)
                            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
                        }
                        var a = a0, b = b0, c = c0, d = d0, e = e0, f = f0, g = g0, h = hh0
                        for t in 0..<64 {
                            let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
                            let ch = (e & f) ^ (~e & g)
                            let t1 = h &+ s1 &+ ch &+ k[t] &+ w[t]
                            let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
                            let maj = (a & b) ^ (a & c) ^ (b & c)
                            let t2 = s0 &+ maj
                            h = g
                            g = f
                            f = e
                            e = d &+ t1
                            d = c
                            c = b
                            b = a
                            a = t1 &+ t2
                        }
                        a0 &+= a; b0 &+= b; c0 &+= c; d0 &+= d
                        e0 &+= e; f0 &+= f; g0 &+= g; hh0 &+= h
                        blockStart += SHA256.blockByteCount
                    }
                }
            }
            h0 = a0; h1 = b0; h2 = c0; h3 = d0; h4 = e0; h5 = f0; h6 = g0; h7 = hh0
        }
    }

    @inline(__always)
    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 {
        (x >> n) | (x << (32 - n))
    }

    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]
}

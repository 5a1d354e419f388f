/// HMAC-SHA256 and what is built on it: sub-key derivation, random bytes, constant-time compare.
///
/// HMAC under a secret key gives names that the server can match (the same note always gets the
/// same row id) but not invert or compute itself.
enum KeyedHash {
    /// HMAC-SHA256's output length in bytes.
    static let byteCount = 32

    /// HMAC-SHA256 (RFC 2104) of `data` under `key`: 32 bytes. libcrypto's one-shot `HMAC` with
    /// `EVP_sha256`.
    ///
    /// - Throws: ``EncryptionError/library(_:)``.
    static func hmacSHA256(key: SymmetricKey, _ data: [UInt8]) throws(EncryptionError) -> [UInt8] {
        try hmacSHA256(keyBytes: key.bytes, data)
    }

    /// HMAC-SHA256 under a key of any length (RFC 4231's test keys are not 32 bytes).
    ///
    /// - Throws: ``EncryptionError/library(_:)``.
    static func hmacSHA256(keyBytes: [UInt8], _ data: [UInt8]) throws(EncryptionError) -> [UInt8] {
        let c = try LibCrypto.library()
        guard let keyLength = Int32(exactly: keyBytes.count) else { throw .malformed("an HMAC key of \(keyBytes.count) bytes") }
        var digest = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let key = LibCrypto.pointable(keyBytes)
        let input = LibCrypto.pointable(data)
        guard c.HMAC(c.EVP_sha256(), key, keyLength, input, data.count, &digest, &length) != nil else {
            throw LibCrypto.failure("HMAC", c)
        }
        guard length == byteCount else { throw .library("HMAC-SHA256 gave \(length) bytes") }
        return digest
    }

    /// The sub-key of `key` for the purpose `label`: HKDF-Expand (RFC 5869 §2.3) with `label` as
    /// its info and one block, HMAC(key, utf8(label) ‖ 0x01).
    ///
    /// `key` is already uniformly random (it needs no HKDF-Extract), and keys with different
    /// labels are independent: one leaked sub-key tells nothing of the others.
    ///
    /// - Throws: ``EncryptionError/library(_:)``.
    static func derive(_ key: SymmetricKey, label: String) throws(EncryptionError) -> SymmetricKey {
        try SymmetricKey(bytes: hmacSHA256(key: key, Array(label.utf8) + [0x01]))
    }

    /// `count` bytes from libcrypto's random generator (`RAND_bytes`, seeded by the kernel).
    ///
    /// - Throws: ``EncryptionError/library(_:)`` when the generator fails (it is not seeded);
    ///   ``EncryptionError/malformed(_:)`` for a negative count or one of 2 GiB or more.
    static func random(_ count: Int) throws(EncryptionError) -> [UInt8] {
        guard count >= 0, let length = Int32(exactly: count) else { throw .malformed("cannot make \(count) random bytes") }
        if count == 0 { return [] }
        let c = try LibCrypto.library()
        var bytes = [UInt8](repeating: 0, count: count)
        try LibCrypto.check(c.RAND_bytes(&bytes, length), "RAND_bytes", c)
        return bytes
    }

    /// Whether `a` and `b` are equal, in time that depends on their lengths only, never on where
    /// they differ: comparing a tag or key with `==` would tell an attacker who times it how many
    /// leading bytes were right. Lengths are not secret (different lengths are simply unequal).
    ///
    /// Plain Swift rather than `CRYPTO_memcmp`, so that it cannot fail when libcrypto is missing.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

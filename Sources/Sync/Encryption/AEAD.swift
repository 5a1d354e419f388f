/// A 256-bit secret key for ``AEAD`` and ``KeyedHash``.
///
/// Its description shows no byte of it, so that a key printed by mistake (a log line, a test
/// failure) does not leak.
struct SymmetricKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The length of every key in bytes: AES-256's key, and HMAC-SHA256's output.
    static let byteCount = 32

    /// The key, exactly ``byteCount`` bytes.
    let bytes: [UInt8]

    /// The key made of `bytes`.
    ///
    /// - Throws: ``EncryptionError/malformed(_:)`` unless there are exactly 32 bytes.
    init(bytes: [UInt8]) throws(EncryptionError) {
        guard bytes.count == Self.byteCount else {
            throw .malformed("a key has \(Self.byteCount) bytes, not \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// A fresh key from libcrypto's random generator (`RAND_bytes`).
    ///
    /// - Throws: ``EncryptionError/library(_:)``.
    static func random() throws(EncryptionError) -> SymmetricKey {
        try SymmetricKey(bytes: KeyedHash.random(byteCount))
    }

    /// Compares in constant time (``KeyedHash/equal(_:_:)``): how long a comparison takes must
    /// not tell how many leading bytes of a secret were right.
    static func == (a: SymmetricKey, b: SymmetricKey) -> Bool {
        KeyedHash.equal(a.bytes, b.bytes)
    }

    /// The length only, never the bytes.
    var description: String { "SymmetricKey(\(bytes.count) bytes)" }
    /// As ``description``.
    var debugDescription: String { description }
}

/// Authenticated encryption with associated data: AES-256-GCM with a random 96-bit nonce
/// (libcrypto's EVP interface).
///
/// A sealed value is `nonce ‖ ciphertext ‖ tag`; the associated data (which row, which version)
/// is authenticated but not stored, so that a value the server moves to another row or rolls
/// back to another version fails to open. Random nonces are safe for up to 2^32 seals under one
/// key (NIST SP 800-38D §8.3), far beyond what one notes database seals.
enum AEAD {
    /// GCM's nonce length, 96 bits (the one GCM uses without hashing it first).
    static let nonceByteCount = 12
    /// GCM's full 128-bit tag (shorter tags weaken the authentication).
    static let tagByteCount = 16
    /// What sealing adds to a plaintext: the 12-byte random nonce and the 16-byte tag.
    static let overhead = 28

    /// `nonce ‖ ciphertext ‖ tag` of `plaintext` under `key`, binding `associatedData`, with a
    /// fresh random nonce (`RAND_bytes`).
    ///
    /// - Throws: ``EncryptionError/library(_:)``; ``EncryptionError/malformed(_:)`` for an input
    ///   of 2 GiB or more (libcrypto takes `int` lengths).
    static func seal(_ plaintext: [UInt8], key: SymmetricKey, associatedData: [UInt8]) throws(EncryptionError) -> [UInt8] {
        try seal(plaintext, key: key, associatedData: associatedData, nonce: KeyedHash.random(nonceByteCount))
    }

    /// Seals with the given `nonce`: for known-answer tests only, since a nonce used twice under
    /// one key reveals the XOR of both plaintexts and lets anyone forge tags.
    ///
    /// `EVP_EncryptInit_ex`, `EVP_EncryptUpdate` (the associated data, then the plaintext),
    /// `EVP_EncryptFinal_ex`, `EVP_CIPHER_CTX_ctrl(EVP_CTRL_GCM_GET_TAG)`.
    ///
    /// - Throws: ``EncryptionError/library(_:)``; ``EncryptionError/malformed(_:)`` for a nonce
    ///   that is not 12 bytes or an input of 2 GiB or more.
    static func seal(_ plaintext: [UInt8], key: SymmetricKey, associatedData: [UInt8], nonce: [UInt8]) throws(EncryptionError) -> [UInt8] {
        guard nonce.count == nonceByteCount else { throw .malformed("a nonce has \(nonceByteCount) bytes, not \(nonce.count)") }
        let lengths = try intLengths(plaintext, associatedData)
        let c = try LibCrypto.library()
        guard let context = c.EVP_CIPHER_CTX_new() else { throw LibCrypto.failure("EVP_CIPHER_CTX_new", c) }
        defer { c.EVP_CIPHER_CTX_free(context) }
        try LibCrypto.check(c.EVP_EncryptInit_ex(context, c.EVP_aes_256_gcm(), nil, key.bytes, nonce), "EVP_EncryptInit_ex", c)
        var written: Int32 = 0
        if !associatedData.isEmpty {
            try LibCrypto.check(
                c.EVP_EncryptUpdate(context, nil, &written, associatedData, lengths.associatedData), "EVP_EncryptUpdate", c)
        }
        // One spare block: GCM writes exactly the plaintext's length, but a buffer is never empty.
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + tagByteCount)
        var length = 0
        if !plaintext.isEmpty {
            try LibCrypto.check(c.EVP_EncryptUpdate(context, &ciphertext, &written, plaintext, lengths.text), "EVP_EncryptUpdate", c)
            length = Int(written)
        }
        var rest = [UInt8](repeating: 0, count: tagByteCount)
        try LibCrypto.check(c.EVP_EncryptFinal_ex(context, &rest, &written), "EVP_EncryptFinal_ex", c)
        guard length == plaintext.count, written == 0 else {
            throw .library("AES-256-GCM wrote \(length + Int(written)) bytes for \(plaintext.count)")
        }
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        try LibCrypto.check(
            c.EVP_CIPHER_CTX_ctrl(context, LibCrypto.gcmGetTag, Int32(tagByteCount), &tag), "EVP_CIPHER_CTX_ctrl(GET_TAG)", c)
        var sealed = nonce
        sealed.reserveCapacity(plaintext.count + overhead)
        sealed += ciphertext[..<length]
        sealed += tag
        return sealed
    }

    /// The plaintext of `sealed` (`nonce ‖ ciphertext ‖ tag`), if it was sealed under `key` with
    /// this `associatedData` and not changed since.
    ///
    /// Takes any bytes (they come from the server): never traps. `EVP_DecryptInit_ex`,
    /// `EVP_DecryptUpdate`, `EVP_CIPHER_CTX_ctrl(EVP_CTRL_GCM_SET_TAG)`, `EVP_DecryptFinal_ex`,
    /// which checks the tag in constant time; no plaintext is returned unless it matches.
    ///
    /// - Throws: ``EncryptionError/malformed(_:)`` for fewer than ``overhead`` bytes (or 2 GiB
    ///   or more); ``EncryptionError/cannotOpen`` when authentication fails (the wrong key,
    ///   changed bytes, other associated data); ``EncryptionError/library(_:)``.
    static func open(_ sealed: [UInt8], key: SymmetricKey, associatedData: [UInt8]) throws(EncryptionError) -> [UInt8] {
        guard sealed.count >= overhead else {
            throw .malformed("a sealed value has at least \(overhead) bytes (nonce and tag), not \(sealed.count)")
        }
        let nonce = Array(sealed[..<nonceByteCount])
        let ciphertext = Array(sealed[nonceByteCount..<(sealed.count - tagByteCount)])
        var tag = Array(sealed[(sealed.count - tagByteCount)...])
        let lengths = try intLengths(ciphertext, associatedData)
        let c = try LibCrypto.library()
        guard let context = c.EVP_CIPHER_CTX_new() else { throw LibCrypto.failure("EVP_CIPHER_CTX_new", c) }
        defer { c.EVP_CIPHER_CTX_free(context) }
        try LibCrypto.check(c.EVP_DecryptInit_ex(context, c.EVP_aes_256_gcm(), nil, key.bytes, nonce), "EVP_DecryptInit_ex", c)
        var written: Int32 = 0
        if !associatedData.isEmpty {
            try LibCrypto.check(
                c.EVP_DecryptUpdate(context, nil, &written, associatedData, lengths.associatedData), "EVP_DecryptUpdate", c)
        }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + tagByteCount)
        var length = 0
        if !ciphertext.isEmpty {
            try LibCrypto.check(c.EVP_DecryptUpdate(context, &plaintext, &written, ciphertext, lengths.text), "EVP_DecryptUpdate", c)
            length = Int(written)
        }
        try LibCrypto.check(
            c.EVP_CIPHER_CTX_ctrl(context, LibCrypto.gcmSetTag, Int32(tagByteCount), &tag), "EVP_CIPHER_CTX_ctrl(SET_TAG)", c)
        var rest = [UInt8](repeating: 0, count: tagByteCount)
        guard c.EVP_DecryptFinal_ex(context, &rest, &written) == 1 else {
            c.ERR_clear_error()
            throw .cannotOpen
        }
        guard length == ciphertext.count, written == 0 else {
            throw .library("AES-256-GCM wrote \(length + Int(written)) bytes for \(ciphertext.count)")
        }
        plaintext.removeSubrange(length...)
        return plaintext
    }

    /// The lengths of `text` and `associatedData` as libcrypto's `int`.
    ///
    /// - Throws: ``EncryptionError/malformed(_:)`` for 2 GiB or more (never a trap on conversion).
    private static func intLengths(_ text: [UInt8], _ associatedData: [UInt8]) throws(EncryptionError) -> (
        text: Int32, associatedData: Int32
    ) {
        guard let textLength = Int32(exactly: text.count), let associatedLength = Int32(exactly: associatedData.count) else {
            throw .malformed(
                "AES-256-GCM takes less than 2 GiB at a time (\(text.count) bytes and \(associatedData.count) of associated data)")
        }
        return (textLength, associatedLength)
    }
}

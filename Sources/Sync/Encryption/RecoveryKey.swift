import RecordStore

/// A random 256-bit secret that unwraps the data key when the passphrase is forgotten, shown to
/// the user once as text to write down.
///
/// The text is Crockford's base32 (no I, L, O, U: nothing to misread) of the secret and a 2-byte
/// checksum, in upper case, in groups of 5 joined by "-": 55 characters, 11 groups. Reading it
/// back forgives case, spaces, dashes and the confusable letters (I and L for 1, O for 0); the
/// checksum catches a mistyped character before any unwrapping is tried.
struct RecoveryKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret's length in bytes.
    static let byteCount = 32
    /// The checksum's length in bytes: the first bytes of SHA-256 of the secret.
    static let checksumByteCount = 2
    /// The length of ``text`` without dashes: ⌈(32 + 2) · 8 / 5⌉.
    static let characterCount = ((byteCount + checksumByteCount) * 8 + 4) / 5
    /// Crockford's base32 digits, by value.
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// 32 random bytes.
    let secret: [UInt8]

    /// A fresh recovery key from libcrypto's random generator.
    ///
    /// - Throws: ``EncryptionError/library(_:)``.
    static func random() throws(EncryptionError) -> RecoveryKey {
        try RecoveryKey(secret: KeyedHash.random(byteCount))
    }

    /// The recovery key `secret`.
    ///
    /// - Throws: ``EncryptionError/malformed(_:)`` unless it has 32 bytes.
    init(secret: [UInt8]) throws(EncryptionError) {
        guard secret.count == Self.byteCount else { throw .malformed("a recovery key has \(Self.byteCount) bytes, not \(secret.count)") }
        self.secret = secret
    }

    /// The text to print once: Crockford base32 of the secret and its checksum, upper case,
    /// groups of 5 joined by "-" (the last 3 bits of the last character are 0).
    var text: String {
        let bytes = secret + SHA256.hash(secret).prefix(Self.checksumByteCount)
        var characters: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                characters.append(Self.alphabet[Int(buffer >> UInt32(bits) & 31)])
            }
            buffer &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 { characters.append(Self.alphabet[Int(buffer << UInt32(5 - bits) & 31)]) }
        var grouped: [UInt8] = []
        for (index, character) in characters.enumerated() {
            if index > 0, index % 5 == 0 { grouped.append(UInt8(ascii: "-")) }
            grouped.append(character)
        }
        return String(decoding: grouped, as: UTF8.self)
    }

    /// The recovery key written as `text`: case, spaces, dashes ignored, I and L read as 1, O as 0.
    ///
    /// - Throws: ``EncryptionError/malformed(_:)`` for a character that is not Crockford base32,
    ///   the wrong number of characters, or a checksum that does not match (a mistyped character).
    init(text: String) throws(EncryptionError) {
        var values: [UInt8] = []
        for scalar in text.unicodeScalars {
            if scalar == "-" || scalar.properties.isWhitespace { continue }
            guard let value = Self.value(of: scalar) else {
                throw .malformed("a recovery key is made of digits and the letters A-Z but I, L, O, U: '\(scalar)' is none of them")
            }
            values.append(value)
        }
        guard values.count == Self.characterCount else {
            throw .malformed("a recovery key has \(Self.characterCount) letters and digits, not \(values.count)")
        }
        var bytes: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for value in values {
            buffer = buffer << 5 | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        let secret = Array(bytes.prefix(Self.byteCount))
        // The padding bits must be 0 and the checksum must match: either wrong is a typing error.
        guard buffer == 0, bytes.count == Self.byteCount + Self.checksumByteCount,
            KeyedHash.equal(Array(bytes.suffix(Self.checksumByteCount)), Array(SHA256.hash(secret).prefix(Self.checksumByteCount)))
        else {
            throw .malformed("the recovery key's checksum does not match: a character is mistyped")
        }
        self.secret = secret
    }

    /// The value of a Crockford base32 character, either case, with I and L as 1 and O as 0.
    private static func value(of scalar: Unicode.Scalar) -> UInt8? {
        guard scalar.isASCII else { return nil }
        var byte = UInt8(scalar.value)
        if byte >= UInt8(ascii: "a"), byte <= UInt8(ascii: "z") { byte -= 32 }
        switch byte {
        case UInt8(ascii: "I"), UInt8(ascii: "L"): byte = UInt8(ascii: "1")
        case UInt8(ascii: "O"): byte = UInt8(ascii: "0")
        default: break
        }
        guard let index = alphabet.firstIndex(of: byte) else { return nil }
        return UInt8(index)
    }

    /// The key that wraps the data key: derive(secret, "notesfs recovery v1").
    ///
    /// - Throws: ``EncryptionError/library(_:)``.
    func keyEncryptionKey() throws(EncryptionError) -> SymmetricKey {
        try KeyedHash.derive(SymmetricKey(bytes: secret), label: WrappedKey.recoveryLabel)
    }

    /// Compares in constant time.
    static func == (a: RecoveryKey, b: RecoveryKey) -> Bool { KeyedHash.equal(a.secret, b.secret) }

    /// Never the secret (it is shown once, on purpose, through ``text``).
    var description: String { "RecoveryKey(…)" }
    /// As ``description``.
    var debugDescription: String { description }
}

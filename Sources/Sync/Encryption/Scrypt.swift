import Foundation

/// scrypt's cost parameters and salt (RFC 7914), stored beside a passphrase-wrapped key so that
/// any client can derive the same key-encryption key.
///
/// They come from the server: ``validate()`` bounds them before any derivation, since N and r
/// set how much memory a client allocates and N·r·p how long it computes. In JSON the salt is a
/// base64 string: `{"n": 131072, "r": 8, "p": 1, "salt": "…"}`.
struct ScryptParameters: Sendable, Equatable, Codable {
    /// The CPU/memory cost: a power of two. Memory is 128·N·r bytes.
    var n: UInt64
    /// The block size factor.
    var r: UInt32
    /// The parallelisation factor (libcrypto computes its lanes one after another: time grows with it).
    var p: UInt32
    /// Random bytes that make one passphrase give different keys on different servers.
    var salt: [UInt8]

    /// The smallest N allowed, 2^10 (RFC 7914's own test vector).
    static let minimumN: UInt64 = 1 << 10
    /// The largest N allowed, 2^20 (1 GiB of memory with r = 8).
    static let maximumN: UInt64 = 1 << 20
    /// The r allowed.
    static let rRange: ClosedRange<UInt32> = 1...32
    /// The p allowed.
    static let pRange: ClosedRange<UInt32> = 1...16
    /// The most memory a derivation may take: 128·N·r bytes, 1 GiB.
    static let maximumMemory: UInt64 = 1 << 30
    /// The most work a derivation may take, N·r·p = 2^23: 8 times the standard parameters', a few
    /// seconds (on an AMD EPYC core with OpenSSL 3.0 the standard ones took 0.43 s, and N = 2^20,
    /// r = 8 took 4.5 s with the machine busy).
    static let maximumWork: UInt64 = 1 << 23
    /// The salt lengths allowed: at least 128 bits, so that salts do not repeat.
    static let saltRange: ClosedRange<Int> = 16...64

    /// The parameters for a new wrapped key: N = 2^17, r = 8, p = 1 (128 MiB of memory), and a
    /// fresh 16-byte salt.
    ///
    /// These are OWASP's minimum for scrypt (Password Storage Cheat Sheet): the memory makes
    /// guessing on GPUs and ASICs expensive, and a client derives the key once per unlock
    /// (about 0.4 s), not per sync.
    ///
    /// - Throws: ``EncryptionError/library(_:)`` when no random salt can be made.
    static func standard() throws(EncryptionError) -> ScryptParameters {
        ScryptParameters(n: 1 << 17, r: 8, p: 1, salt: try KeyedHash.random(16))
    }

    /// Refuses parameters that would take too much memory or time, or are too weak: N a power of
    /// two in 2^10...2^20, r in 1...32, p in 1...16, 128·N·r ≤ 1 GiB, N·r·p ≤ 2^23, a salt of
    /// 16...64 bytes.
    ///
    /// - Throws: ``EncryptionError/kdfOutOfBounds(_:)`` saying what is asked and the bound.
    func validate() throws(EncryptionError) {
        guard Self.saltRange.contains(salt.count) else {
            throw .kdfOutOfBounds(
                "a scrypt salt of \(salt.count) bytes: \(Self.saltRange.lowerBound) to \(Self.saltRange.upperBound) allowed")
        }
        let memory = 128 * Double(n) * Double(r)
        guard n.nonzeroBitCount == 1, n >= Self.minimumN else {
            throw .kdfOutOfBounds("scrypt N = \(Self.power(n)): a power of two from 2^10 to 2^20 allowed")
        }
        guard n <= Self.maximumN else {
            throw .kdfOutOfBounds(
                "scrypt N = \(Self.power(n)) with r = \(r) asks \(Self.size(memory)) of memory: N up to 2^20 and at most 1 GiB allowed")
        }
        guard r >= Self.rRange.lowerBound else { throw .kdfOutOfBounds("scrypt r = \(r): from 1 to 32 allowed") }
        guard r <= Self.rRange.upperBound else {
            throw .kdfOutOfBounds("scrypt r = \(r) with N = \(Self.power(n)) asks \(Self.size(memory)) of memory: r from 1 to 32 allowed")
        }
        guard Self.pRange.contains(p) else {
            throw .kdfOutOfBounds("scrypt p = \(p): from 1 to 16 allowed (the time grows with p)")
        }
        guard memory <= Double(Self.maximumMemory) else {
            throw .kdfOutOfBounds(
                "scrypt N = \(Self.power(n)), r = \(r) asks \(Self.size(memory)) of memory (128·N·r): at most 1 GiB allowed")
        }
        let work = n * UInt64(r) * UInt64(p)  // at most 2^20 · 32 · 16: no overflow
        guard work <= Self.maximumWork else {
            throw .kdfOutOfBounds(
                "scrypt N = \(Self.power(n)), r = \(r), p = \(p) asks N·r·p = \(Self.power(work)), \(work >> 20) times the standard"
                    + " parameters' work: at most 2^23 (8 times, a few seconds) allowed")
        }
    }

    /// `value` as `2^k` when it is a power of two, else in decimal.
    private static func power(_ value: UInt64) -> String {
        value.nonzeroBitCount == 1 ? "2^\(value.trailingZeroBitCount)" : "\(value)"
    }

    /// A byte count in KiB, MiB, GiB or TiB.
    private static func size(_ bytes: Double) -> String {
        var value = bytes
        for unit in ["bytes", "KiB", "MiB", "GiB"] {
            if value < 1024 { return "\(Self.trimmed(value)) \(unit)" }
            value /= 1024
        }
        return "\(Self.trimmed(value)) TiB"
    }

    /// `value` to two decimals, without a fraction when it has none.
    private static func trimmed(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded.rounded() == rounded && rounded < 1e15 ? "\(Int64(rounded))" : "\(rounded)"
    }

    private enum CodingKeys: String, CodingKey { case n, r, p, salt }

    /// Decodes `{"n", "r", "p", "salt"}`, the salt from base64.
    ///
    /// - Throws: `DecodingError` for a missing field or a salt that is not base64 (bounds are
    ///   checked later, by ``validate()``).
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        n = try container.decode(UInt64.self, forKey: .n)
        r = try container.decode(UInt32.self, forKey: .r)
        p = try container.decode(UInt32.self, forKey: .p)
        salt = try Base64Field.decode(container, forKey: .salt)
    }

    /// Encodes `{"n", "r", "p", "salt"}`, the salt as base64.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(n, forKey: .n)
        try container.encode(r, forKey: .r)
        try container.encode(p, forKey: .p)
        try container.encode(Data(salt).base64EncodedString(), forKey: .salt)
    }

    /// The memberwise initialiser (Codable's custom `init(from:)` hides the synthesised one).
    init(n: UInt64, r: UInt32, p: UInt32, salt: [UInt8]) {
        self.n = n
        self.r = r
        self.p = p
        self.salt = salt
    }
}

/// Byte fields kept in JSON as base64 strings.
enum Base64Field {
    /// The bytes of the base64 string at `key`.
    ///
    /// - Throws: `DecodingError` when it is missing, not a string or not base64.
    static func decode<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, forKey key: Key) throws -> [UInt8] {
        let text = try container.decode(String.self, forKey: key)
        guard let data = Data(base64Encoded: text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "\(key.stringValue) is not base64")
        }
        return [UInt8](data)
    }
}

/// Keys derived from passphrases.
enum KeyDerivation {
    /// The 32-byte key scrypt (RFC 7914) derives from `passphrase` with `parameters`, after
    /// ``ScryptParameters/validate()``.
    ///
    /// - Throws: ``EncryptionError/kdfOutOfBounds(_:)`` for parameters out of bounds (nothing is
    ///   allocated then); ``EncryptionError/library(_:)``.
    static func scrypt(_ passphrase: [UInt8], _ parameters: ScryptParameters) throws(EncryptionError) -> SymmetricKey {
        try parameters.validate()
        return try SymmetricKey(bytes: scryptUnchecked(passphrase, parameters, length: SymmetricKey.byteCount))
    }

    /// scrypt without the bounds of ``ScryptParameters/validate()``: for RFC 7914's test vectors
    /// (a 4-byte salt, p = 16) and nothing that comes from a server. `EVP_PBE_scrypt`, given as
    /// its memory limit exactly what these parameters need (its default, 32 MiB, refuses the
    /// standard 128 MiB).
    ///
    /// - Throws: ``EncryptionError/library(_:)`` when libcrypto refuses the parameters or fails;
    ///   ``EncryptionError/malformed(_:)`` when their memory does not fit in 64 bits.
    static func scryptUnchecked(_ passphrase: [UInt8], _ parameters: ScryptParameters, length: Int) throws(EncryptionError) -> [UInt8] {
        // libcrypto's own reckoning: 128·r·(N + 2) bytes for V, 128·r·p for B.
        let r = UInt64(parameters.r)
        let p = UInt64(parameters.p)
        guard length > 0, let v = product(128, r, parameters.n, plus: 2 * 128 * r), let b = product(128, r, p),
            case (let memory, false) = v.addingReportingOverflow(b)
        else {
            throw .malformed("scrypt parameters out of range (N = \(parameters.n), r = \(parameters.r), p = \(parameters.p))")
        }
        let c = try LibCrypto.library()
        var key = [UInt8](repeating: 0, count: length)
        let password = LibCrypto.pointable(passphrase).map { CChar(bitPattern: $0) }
        let salt = LibCrypto.pointable(parameters.salt)
        try LibCrypto.check(
            c.EVP_PBE_scrypt(
                password, passphrase.count, salt, parameters.salt.count, parameters.n, r, p, memory, &key, length),
            "EVP_PBE_scrypt", c)
        return key
    }

    /// The product of `factors`, plus `addend`; nil when it does not fit in 64 bits.
    private static func product(_ factors: UInt64..., plus addend: UInt64 = 0) -> UInt64? {
        var result: UInt64 = 1
        for factor in factors {
            let (value, overflow) = result.multipliedReportingOverflow(by: factor)
            if overflow { return nil }
            result = value
        }
        let (sum, overflow) = result.addingReportingOverflow(addend)
        return overflow ? nil : sum
    }
}

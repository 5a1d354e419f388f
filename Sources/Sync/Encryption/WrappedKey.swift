import Foundation
import RecordStore

/// The data key as the server keeps it: sealed (``AEAD``) under a key-encryption key that only
/// a passphrase or a recovery key gives.
///
/// The associated data binds it to the server epoch, its kind and its key ID, so that a wrapped
/// key copied from another server, or relabelled, does not open. In JSON the sealed bytes are a
/// base64 string: `{"kind": "passphrase", "kdf": {…}, "sealed": "…", "keyID": "…"}`.
struct WrappedKey: Sendable, Equatable, Codable {
    /// What unwraps it.
    enum Kind: String, Codable, Sendable {
        /// A passphrase, through scrypt with ``WrappedKey/kdf``.
        case passphrase
        /// A ``RecoveryKey``, through HKDF (it is random: no scrypt needed).
        case recovery
    }

    /// What unwraps it.
    var kind: Kind
    /// scrypt's parameters for ``Kind/passphrase``; nil for ``Kind/recovery``.
    var kdf: ScryptParameters?
    /// The AEAD of the 32 key bytes: nonce, ciphertext, tag.
    var sealed: [UInt8]
    /// ``DataKey/keyID`` of the key inside, in clear: which key this is, before unwrapping.
    var keyID: String

    /// The label recovery keys derive their key-encryption key with.
    static let recoveryLabel = "notesfs recovery v1"

    /// The associated data of a wrapped key: "notesfs data key v1\0" + serverEpoch + "\0" +
    /// kind + "\0" + keyID.
    static func associatedData(serverEpoch: String, kind: Kind, keyID: String) -> [UInt8] {
        Array("notesfs data key v1\0\(serverEpoch)\0\(kind.rawValue)\0\(keyID)".utf8)
    }

    /// `key` wrapped under `passphrase`, with fresh ``ScryptParameters/standard()``, for the
    /// server of epoch `serverEpoch`.
    ///
    /// - Throws: ``EncryptionError/library(_:)``; ``EncryptionError/malformed(_:)`` for an epoch
    ///   holding a NUL (the associated data's separator).
    static func wrap(_ key: DataKey, passphrase: [UInt8], serverEpoch: String) throws(EncryptionError) -> WrappedKey {
        let parameters = try ScryptParameters.standard()
        let kek = try KeyDerivation.scrypt(passphrase, parameters)
        return try wrap(key, under: kek, kind: .passphrase, kdf: parameters, serverEpoch: serverEpoch)
    }

    /// `key` wrapped under `recoveryKey` for the server of epoch `serverEpoch`: the key-encryption
    /// key is derive(secret, "notesfs recovery v1"), no scrypt, since the secret has 256 random
    /// bits (nothing to slow a guess of down).
    ///
    /// - Throws: ``EncryptionError/library(_:)``; ``EncryptionError/malformed(_:)`` for an epoch
    ///   holding a NUL.
    static func wrap(_ key: DataKey, recoveryKey: RecoveryKey, serverEpoch: String) throws(EncryptionError) -> WrappedKey {
        try wrap(key, under: recoveryKey.keyEncryptionKey(), kind: .recovery, kdf: nil, serverEpoch: serverEpoch)
    }

    private static func wrap(_ key: DataKey, under kek: SymmetricKey, kind: Kind, kdf: ScryptParameters?, serverEpoch: String)
        throws(EncryptionError) -> WrappedKey
    {
        guard !serverEpoch.utf8.contains(0) else { throw .malformed("a server epoch holds no NUL") }
        let data = associatedData(serverEpoch: serverEpoch, kind: kind, keyID: key.keyID)
        let sealed = try AEAD.seal(key.key.bytes, key: kek, associatedData: data)
        return WrappedKey(kind: kind, kdf: kdf, sealed: sealed, keyID: key.keyID)
    }

    /// The data key, unwrapped with `passphrase` (the server's values are checked first: kind,
    /// then ``ScryptParameters/validate()`` before any memory is taken).
    ///
    /// - Throws: ``EncryptionError/wrongPassphrase`` when it does not open (the wrong passphrase,
    ///   another server epoch, changed bytes) or opens to a key of another ID;
    ///   ``EncryptionError/kdfOutOfBounds(_:)``; ``EncryptionError/malformed(_:)`` for a wrapped
    ///   key of the other kind, without scrypt parameters, with a key ID that is not 32 hex
    ///   characters, or an epoch holding a NUL; ``EncryptionError/library(_:)``.
    func unwrap(passphrase: [UInt8], serverEpoch: String) throws(EncryptionError) -> DataKey {
        guard kind == .passphrase else { throw .malformed("this data key is wrapped by a recovery key, not a passphrase") }
        guard let kdf else { throw .malformed("a passphrase-wrapped data key without scrypt parameters") }
        try checkNames(serverEpoch: serverEpoch)
        try kdf.validate()
        let kek = try KeyDerivation.scrypt(passphrase, kdf)
        return try unwrap(under: kek, serverEpoch: serverEpoch, wrong: .wrongPassphrase)
    }

    /// The data key, unwrapped with `recoveryKey`.
    ///
    /// - Throws: ``EncryptionError/wrongRecoveryKey`` when it does not open or opens to a key of
    ///   another ID; ``EncryptionError/malformed(_:)`` for a wrapped key of the other kind, a key
    ///   ID that is not 32 hex characters or an epoch holding a NUL; ``EncryptionError/library(_:)``.
    func unwrap(recoveryKey: RecoveryKey, serverEpoch: String) throws(EncryptionError) -> DataKey {
        guard kind == .recovery else { throw .malformed("this data key is wrapped by a passphrase, not a recovery key") }
        try checkNames(serverEpoch: serverEpoch)
        return try unwrap(under: recoveryKey.keyEncryptionKey(), serverEpoch: serverEpoch, wrong: .wrongRecoveryKey)
    }

    /// Refuses a key ID that is not 32 lower-case hex characters, and an epoch holding a NUL: the
    /// associated data separates its parts by NUL, so that no two wrapped keys share it. Checked
    /// before scrypt runs, so that a server's junk costs no derivation.
    ///
    /// - Throws: ``EncryptionError/malformed(_:)``.
    private func checkNames(serverEpoch: String) throws(EncryptionError) {
        guard keyID.utf8.count == 32, keyID.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw .malformed("a wrapped key's ID is 32 lower-case hex characters")
        }
        guard !serverEpoch.utf8.contains(0) else { throw .malformed("a server epoch holds no NUL") }
    }

    private func unwrap(under kek: SymmetricKey, serverEpoch: String, wrong: EncryptionError) throws(EncryptionError) -> DataKey {
        let data = Self.associatedData(serverEpoch: serverEpoch, kind: kind, keyID: keyID)
        let bytes: [UInt8]
        do throws(EncryptionError) { bytes = try AEAD.open(sealed, key: kek, associatedData: data) } catch .cannotOpen { throw wrong }
        let key = try DataKey(key: SymmetricKey(bytes: bytes))
        // The ID is in the associated data already; checked again so that a key which opened
        // is never taken for another.
        guard key.keyID == keyID else { throw wrong }
        return key
    }

    private enum CodingKeys: String, CodingKey { case kind, kdf, sealed, keyID }

    /// Decodes the JSON form, the sealed bytes from base64.
    ///
    /// - Throws: `DecodingError` for a missing field, an unknown kind, or bytes that are not base64.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decode(Kind.self, forKey: .kind)
        kdf = try container.decodeIfPresent(ScryptParameters.self, forKey: .kdf)
        sealed = try Base64Field.decode(container, forKey: .sealed)
        keyID = try container.decode(String.self, forKey: .keyID)
    }

    /// Encodes the JSON form, the sealed bytes as base64 (no `kdf` for a recovery key).
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encodeIfPresent(kdf, forKey: .kdf)
        try container.encode(Data(sealed).base64EncodedString(), forKey: .sealed)
        try container.encode(keyID, forKey: .keyID)
    }

    /// The memberwise initialiser (Codable's custom `init(from:)` hides the synthesised one).
    init(kind: Kind, kdf: ScryptParameters?, sealed: [UInt8], keyID: String) {
        self.kind = kind
        self.kdf = kdf
        self.sealed = sealed
        self.keyID = keyID
    }
}

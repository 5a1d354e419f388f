import RecordStore

/// The secret of one encrypted server: every client of it holds the same data key, and derives
/// from it one independent sub-key per purpose.
///
/// The server never sees it: it keeps it wrapped (``WrappedKey``) under a passphrase and a
/// recovery key. The sub-keys are derived once, at ``init(key:)``, so that sealing a record
/// costs no derivation.
struct DataKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The 32 random bytes everything else derives from.
    let key: SymmetricKey
    /// Seals record payloads: `derive(key, "notesfs record payload v1")`.
    let recordKey: SymmetricKey
    /// Names rows (record names, origins) by HMAC: `derive(key, "notesfs row id v1")`.
    let rowKey: SymmetricKey
    /// Names and seals assets: `derive(key, "notesfs asset v1")`.
    let assetKey: SymmetricKey
    /// 32 lower-case hex characters: the hex of the first 16 bytes of HMAC(key, "notesfs key id v1").
    /// Tells keys apart (which key a server uses, whether the local one is it) without revealing them.
    let keyID: String

    /// The data key `key`, with its sub-keys and ID derived.
    ///
    /// - Throws: ``EncryptionError/library(_:)``.
    init(key: SymmetricKey) throws(EncryptionError) {
        self.key = key
        recordKey = try KeyedHash.derive(key, label: "notesfs record payload v1")
        rowKey = try KeyedHash.derive(key, label: "notesfs row id v1")
        assetKey = try KeyedHash.derive(key, label: "notesfs asset v1")
        keyID = SHA256.hex(Array(try KeyedHash.hmacSHA256(key: key, Array("notesfs key id v1".utf8)).prefix(16)))
    }

    /// A fresh data key (for a server being made encrypted).
    ///
    /// - Throws: ``EncryptionError/library(_:)``.
    static func random() throws(EncryptionError) -> DataKey {
        try DataKey(key: SymmetricKey.random())
    }

    /// The server's name for the row `text` (a record name, an origin): 64 lower-case hex
    /// characters, hex(HMAC(rowKey, utf8(text))). The same text always gives the same id, so a
    /// client finds its row again; the server cannot tell the text from it.
    ///
    /// - Throws: ``EncryptionError/library(_:)``.
    func rowID(_ text: String) throws(EncryptionError) -> String {
        SHA256.hex(try KeyedHash.hmacSHA256(key: rowKey, Array(text.utf8)))
    }

    /// The server's name for the asset whose content has the SHA-256 `hex`: hex(HMAC(assetKey,
    /// utf8(hex))), 64 lower-case hex characters. Identical content still deduplicates, but the
    /// server cannot test whether a client holds a file it knows the hash of.
    ///
    /// - Throws: ``EncryptionError/library(_:)``.
    func assetID(sha256 hex: String) throws(EncryptionError) -> String {
        SHA256.hex(try KeyedHash.hmacSHA256(key: assetKey, Array(hex.utf8)))
    }

    /// Equal when the keys are (the rest derives from them); compared in constant time.
    static func == (a: DataKey, b: DataKey) -> Bool { a.key == b.key }

    /// The key ID only, never a secret byte.
    var description: String { "DataKey(\(keyID))" }
    /// As ``description``.
    var debugDescription: String { description }
}

import Foundation
import TestSupport
import Testing

@testable import Sync

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The primitives of end-to-end encrypted sync: known-answer vectors for AES-256-GCM, HMAC-SHA256
/// and scrypt, then what the sync engine relies on (tampering refused, bounds refused, keys
/// wrapped and kept).
@Suite struct EncryptionPrimitiveTests {
    // MARK: Known answers

    /// McGrew and Viega's GCM test cases 13, 14 and 16 (AES-256, 96-bit IV): key, IV,
    /// plaintext, associated data, ciphertext, tag.
    static let gcmVectors: [(key: String, nonce: String, plaintext: String, associatedData: String, ciphertext: String, tag: String)] = [
        (String(repeating: "00", count: 32), String(repeating: "00", count: 12), "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"),
        (
            String(repeating: "00", count: 32), String(repeating: "00", count: 12), String(repeating: "00", count: 16), "",
            "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"
        ),
        (
            "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
            "feedfacedeadbeeffeedfacedeadbeefabaddad2",
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
            "76fc6ece0f4e1768cddf8853bb2d551b"
        ),
    ]

    @Test(arguments: gcmVectors.indices)
    func aesGCMKnownAnswers(index: Int) throws {
        let vector = Self.gcmVectors[index]
        let key = try SymmetricKey(bytes: bytes(vector.key))
        let sealed = try AEAD.seal(
            bytes(vector.plaintext), key: key, associatedData: bytes(vector.associatedData), nonce: bytes(vector.nonce))
        #expect(hex(sealed) == vector.nonce + vector.ciphertext + vector.tag)
        #expect(try AEAD.open(sealed, key: key, associatedData: bytes(vector.associatedData)) == bytes(vector.plaintext))
    }

    /// RFC 4231 test case 2 (a key shorter than the block), and HMAC under a 32-byte key.
    @Test func hmacSHA256KnownAnswer() throws {
        let mac = try KeyedHash.hmacSHA256(keyBytes: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8))
        #expect(hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let key = try SymmetricKey(bytes: Array(repeating: 7, count: 32))
        #expect(try KeyedHash.hmacSHA256(key: key, []) == KeyedHash.hmacSHA256(keyBytes: key.bytes, []))
        #expect(try KeyedHash.derive(key, label: "a") == SymmetricKey(bytes: KeyedHash.hmacSHA256(key: key, [0x61, 0x01])))
        #expect(try KeyedHash.derive(key, label: "a") != KeyedHash.derive(key, label: "b"))
    }

    /// RFC 7914 §12's vectors: ("", "", N = 16, r = 1, p = 1) and ("password", "NaCl", N = 1024,
    /// r = 8, p = 16), through the unchecked entry (their salts are shorter than ``validate()``
    /// allows). The 32-byte key is the first half of the 64-byte output (PBKDF2's first block).
    @Test func scryptKnownAnswers() throws {
        let empty = ScryptParameters(n: 16, r: 1, p: 1, salt: [])
        #expect(
            try hex(KeyDerivation.scryptUnchecked([], empty, length: 64))
                == "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"
        )
        let nacl = ScryptParameters(n: 1024, r: 8, p: 16, salt: Array("NaCl".utf8))
        #expect(
            try hex(KeyDerivation.scryptUnchecked(Array("password".utf8), nacl, length: 64))
                == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
        )
        // The same parameters with a salt long enough pass validate(): the checked entry agrees.
        let salted = ScryptParameters(n: 1024, r: 8, p: 16, salt: Array(repeating: 1, count: 16))
        #expect(
            try KeyDerivation.scrypt(Array("password".utf8), salted).bytes
                == KeyDerivation.scryptUnchecked(Array("password".utf8), salted, length: 32))
    }

    // MARK: AEAD

    @Test(arguments: [0, 1, 15, 16, 17, 1000, 65_536])
    func sealOpenRoundTrip(count: Int) throws {
        let key = try SymmetricKey.random()
        let plaintext = try KeyedHash.random(count)
        let data = Array("row 1 v2".utf8)
        let sealed = try AEAD.seal(plaintext, key: key, associatedData: data)
        #expect(sealed.count == count + AEAD.overhead)
        #expect(try AEAD.open(sealed, key: key, associatedData: data) == plaintext)
        // A fresh nonce each time: the same plaintext never seals the same.
        #expect(try AEAD.seal(plaintext, key: key, associatedData: data) != sealed)
        #expect(try AEAD.open(AEAD.seal(plaintext, key: key, associatedData: []), key: key, associatedData: []) == plaintext)
    }

    /// Every single-bit change of the sealed bytes or of the associated data is refused.
    @Test(arguments: [0, 20])
    func everyBitFlipIsRefused(count: Int) throws {
        let key = try SymmetricKey.random()
        let data = Array("notesfs record payload\0row\0v7".utf8)
        let sealed = try AEAD.seal(Array(repeating: 0x5a, count: count), key: key, associatedData: data)
        for bit in 0..<(sealed.count * 8) {
            var changed = sealed
            changed[bit / 8] ^= 1 << UInt8(bit % 8)
            #expect(throws: EncryptionError.cannotOpen) { try AEAD.open(changed, key: key, associatedData: data) }
        }
        for bit in 0..<(data.count * 8) {
            var changed = data
            changed[bit / 8] ^= 1 << UInt8(bit % 8)
            #expect(throws: EncryptionError.cannotOpen) { try AEAD.open(sealed, key: key, associatedData: changed) }
        }
        #expect(throws: EncryptionError.cannotOpen) { try AEAD.open(sealed, key: key, associatedData: data + [0]) }
        #expect(throws: EncryptionError.cannotOpen) { try AEAD.open(sealed, key: key, associatedData: []) }
        #expect(throws: EncryptionError.cannotOpen) { try AEAD.open(sealed, key: SymmetricKey.random(), associatedData: data) }
    }

    /// Every truncation is refused: shorter than nonce and tag as malformed, else as not authentic;
    /// so is a byte appended.
    @Test func truncationsAreRefused() throws {
        let key = try SymmetricKey.random()
        let sealed = try AEAD.seal(Array("a short note".utf8), key: key, associatedData: [1, 2, 3])
        for count in 0..<sealed.count {
            let error = encryptionError { () throws(EncryptionError) in
                _ = try AEAD.open(Array(sealed.prefix(count)), key: key, associatedData: [1, 2, 3])
            }
            if count < AEAD.overhead {
                #expect(error == .malformed("a sealed value has at least 28 bytes (nonce and tag), not \(count)"))
            } else {
                #expect(error == .cannotOpen)
            }
        }
        #expect(throws: EncryptionError.cannotOpen) { try AEAD.open(sealed + [0], key: key, associatedData: [1, 2, 3]) }
        #expect(throws: EncryptionError.cannotOpen) { try AEAD.open(Array(sealed.dropFirst()), key: key, associatedData: [1, 2, 3]) }
    }

    /// Bytes a hostile server could send: every length around the overhead, random content. No trap.
    @Test func hostileBytesNeverTrap() throws {
        let key = try SymmetricKey.random()
        for count in [0, 1, 11, 12, 27, 28, 29, 44, 100, 4097] {
            for _ in 0..<8 {
                let error = encryptionError { () throws(EncryptionError) in
                    _ = try AEAD.open(try KeyedHash.random(count), key: key, associatedData: [])
                }
                #expect(
                    error
                        == (count < AEAD.overhead
                            ? .malformed("a sealed value has at least 28 bytes (nonce and tag), not \(count)") : .cannotOpen))
            }
        }
    }

    @Test func keysHaveThirtyTwoBytes() throws {
        #expect(throws: EncryptionError.malformed("a key has 32 bytes, not 31")) { try SymmetricKey(bytes: Array(repeating: 0, count: 31)) }
        #expect(throws: EncryptionError.malformed("a key has 32 bytes, not 0")) { try SymmetricKey(bytes: []) }
        #expect(throws: EncryptionError.malformed("a nonce has 12 bytes, not 8")) {
            try AEAD.seal([], key: SymmetricKey.random(), associatedData: [], nonce: Array(repeating: 0, count: 8))
        }
        #expect(try KeyedHash.random(0).isEmpty)
        #expect(try KeyedHash.random(32) != KeyedHash.random(32))
        #expect(throws: EncryptionError.self) { try KeyedHash.random(-1) }
        #expect(KeyedHash.equal([1, 2, 3], [1, 2, 3]))
        #expect(!KeyedHash.equal([1, 2, 3], [1, 2, 4]))
        #expect(!KeyedHash.equal([1, 2, 3], [1, 2]))
        #expect(KeyedHash.equal([], []))
        #expect(!String(describing: try SymmetricKey(bytes: Array(repeating: 0xab, count: 32))).contains("171"))
    }

    // MARK: Key derivation bounds

    /// Parameters a server could ask for, each refused before any memory is taken, with a message
    /// that says what was asked and the bound.
    @Test(arguments: [
        (
            ScryptParameters(n: 1 << 30, r: 8, p: 1, salt: salt16),
            "scrypt N = 2^30 with r = 8 asks 1 TiB of memory: N up to 2^20 and at most 1 GiB allowed"
        ),
        (
            ScryptParameters(n: 1 << 30, r: 1, p: 1, salt: salt16),
            "scrypt N = 2^30 with r = 1 asks 128 GiB of memory: N up to 2^20 and at most 1 GiB allowed"
        ),
        (
            ScryptParameters(n: 1 << 14, r: 1000, p: 1, salt: salt16),
            "scrypt r = 1000 with N = 2^14 asks 1.95 GiB of memory: r from 1 to 32 allowed"
        ),
        (ScryptParameters(n: 1 << 17, r: 8, p: 1, salt: []), "a scrypt salt of 0 bytes: 16 to 64 allowed"),
        (ScryptParameters(n: 1 << 17, r: 8, p: 1, salt: Array(repeating: 0, count: 65)), "a scrypt salt of 65 bytes: 16 to 64 allowed"),
        (ScryptParameters(n: 1000, r: 8, p: 1, salt: salt16), "scrypt N = 1000: a power of two from 2^10 to 2^20 allowed"),
        (ScryptParameters(n: 1 << 9, r: 8, p: 1, salt: salt16), "scrypt N = 2^9: a power of two from 2^10 to 2^20 allowed"),
        (ScryptParameters(n: 0, r: 8, p: 1, salt: salt16), "scrypt N = 0: a power of two from 2^10 to 2^20 allowed"),
        (ScryptParameters(n: 1 << 17, r: 8, p: 17, salt: salt16), "scrypt p = 17: from 1 to 16 allowed (the time grows with p)"),
        (
            ScryptParameters(n: 1 << 17, r: 0, p: 1, salt: salt16),
            "scrypt r = 0: from 1 to 32 allowed"
        ),
        (
            ScryptParameters(n: 1 << 20, r: 16, p: 1, salt: salt16),
            "scrypt N = 2^20, r = 16 asks 2 GiB of memory (128·N·r): at most 1 GiB allowed"
        ),
        (
            ScryptParameters(n: 1 << 20, r: 8, p: 2, salt: salt16),
            "scrypt N = 2^20, r = 8, p = 2 asks N·r·p = 2^24, 16 times the standard parameters' work: at most 2^23 (8 times, a few seconds) allowed"
        ),
        (
            ScryptParameters(n: .max, r: .max, p: .max, salt: salt16),
            "scrypt N = 18446744073709551615: a power of two from 2^10 to 2^20 allowed"
        ),
    ])
    func kdfBoundsAreRefused(parameters: ScryptParameters, message: String) {
        #expect(throws: EncryptionError.kdfOutOfBounds(message)) { try parameters.validate() }
        #expect(throws: EncryptionError.kdfOutOfBounds(message)) { try KeyDerivation.scrypt(Array("x".utf8), parameters) }
    }

    static let salt16 = [UInt8](repeating: 9, count: 16)

    @Test func standardParametersAreWithinBounds() throws {
        let standard = try ScryptParameters.standard()
        #expect(standard.n == 1 << 17 && standard.r == 8 && standard.p == 1 && standard.salt.count == 16)
        try standard.validate()
        #expect(try ScryptParameters.standard().salt != standard.salt)
        // The largest allowed: 1 GiB, 2^23 work.
        try ScryptParameters(n: 1 << 20, r: 8, p: 1, salt: Self.salt16).validate()
        try ScryptParameters(n: 1 << 10, r: 8, p: 16, salt: Array(repeating: 0, count: 64)).validate()
    }

    @Test func scryptParametersInJSON() throws {
        let parameters = ScryptParameters(n: 1 << 17, r: 8, p: 1, salt: Array(0..<16))
        let json = try JSONEncoder().encode(parameters)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object["salt"] as? String == Data(Array(0..<16)).base64EncodedString())
        #expect(object["n"] as? Int == 1 << 17)
        #expect(try JSONDecoder().decode(ScryptParameters.self, from: json) == parameters)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ScryptParameters.self, from: Data(#"{"n": 1024, "r": 8, "p": 1, "salt": "not base64!"}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ScryptParameters.self, from: Data(#"{"n": -1, "r": 8, "p": 1, "salt": ""}"#.utf8))
        }
    }

    // MARK: Keys

    @Test func dataKeyNamesAndSubKeys() throws {
        let key = try DataKey(key: SymmetricKey(bytes: Array(repeating: 1, count: 32)))
        #expect(key.keyID.count == 32 && key.keyID.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(key.keyID == hex(Array(try KeyedHash.hmacSHA256(key: key.key, Array("notesfs key id v1".utf8)).prefix(16))))
        #expect(key.recordKey == (try KeyedHash.derive(key.key, label: "notesfs record payload v1")))
        #expect(key.rowKey == (try KeyedHash.derive(key.key, label: "notesfs row id v1")))
        #expect(key.assetKey == (try KeyedHash.derive(key.key, label: "notesfs asset v1")))
        #expect(Set([key.key.bytes, key.recordKey.bytes, key.rowKey.bytes, key.assetKey.bytes]).count == 4)
        let row = try key.rowID("Note-1")
        #expect(row.count == 64 && row.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(row == hex(try KeyedHash.hmacSHA256(key: key.rowKey, Array("Note-1".utf8))))
        #expect(try key.rowID("Note-1") == row)
        #expect(try key.rowID("Note-2") != row)
        let sha = String(repeating: "ab", count: 32)
        #expect(try key.assetID(sha256: sha) == hex(try KeyedHash.hmacSHA256(key: key.assetKey, Array(sha.utf8))))
        let other = try DataKey.random()
        #expect(other != key && other.keyID != key.keyID)
        #expect(try other.rowID("Note-1") != row)
        #expect(try DataKey(key: key.key) == key)
        #expect(!"\(key)".contains(hex(key.key.bytes)))
    }

    /// One scrypt a call (about 0.4 s): a wrap, then an unwrap with the right passphrase, the
    /// wrong one, and the right one for another server epoch.
    @Test func wrapAndUnwrapWithAPassphrase() throws {
        let key = try DataKey.random()
        let passphrase = Array("correct horse battery staple".utf8)
        let wrapped = try WrappedKey.wrap(key, passphrase: passphrase, serverEpoch: "epoch-1")
        #expect(wrapped.kind == .passphrase && wrapped.keyID == key.keyID && wrapped.kdf?.n == 1 << 17)
        #expect(wrapped.sealed.count == 32 + AEAD.overhead)
        #expect(try wrapped.unwrap(passphrase: passphrase, serverEpoch: "epoch-1") == key)
        #expect(throws: EncryptionError.wrongPassphrase) {
            try wrapped.unwrap(passphrase: Array("Correct horse".utf8), serverEpoch: "epoch-1")
        }
        #expect(throws: EncryptionError.wrongPassphrase) { try wrapped.unwrap(passphrase: passphrase, serverEpoch: "epoch-2") }

        // What a server could change without scrypt being run: bounds, the kind, missing parameters.
        var greedy = wrapped
        greedy.kdf?.n = 1 << 30
        #expect(throws: EncryptionError.self) { try greedy.unwrap(passphrase: passphrase, serverEpoch: "epoch-1") }
        #expect(
            encryptionError { () throws(EncryptionError) in _ = try greedy.unwrap(passphrase: passphrase, serverEpoch: "epoch-1") }
                == .kdfOutOfBounds("scrypt N = 2^30 with r = 8 asks 1 TiB of memory: N up to 2^20 and at most 1 GiB allowed"))
        var relabelled = wrapped
        relabelled.kind = .recovery
        #expect(throws: EncryptionError.malformed("this data key is wrapped by a recovery key, not a passphrase")) {
            try relabelled.unwrap(passphrase: passphrase, serverEpoch: "epoch-1")
        }
        var bare = wrapped
        bare.kdf = nil
        #expect(throws: EncryptionError.malformed("a passphrase-wrapped data key without scrypt parameters")) {
            try bare.unwrap(passphrase: passphrase, serverEpoch: "epoch-1")
        }

        let json = try JSONEncoder().encode(wrapped)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object["sealed"] as? String == Data(wrapped.sealed).base64EncodedString())
        #expect(try JSONDecoder().decode(WrappedKey.self, from: json) == wrapped)
    }

    @Test func wrapAndUnwrapWithARecoveryKey() throws {
        let key = try DataKey.random()
        let recovery = try RecoveryKey.random()
        let wrapped = try WrappedKey.wrap(key, recoveryKey: recovery, serverEpoch: "e")
        #expect(wrapped.kind == .recovery && wrapped.kdf == nil && wrapped.keyID == key.keyID)
        #expect(try wrapped.unwrap(recoveryKey: recovery, serverEpoch: "e") == key)
        #expect(try wrapped.unwrap(recoveryKey: RecoveryKey(text: recovery.text.lowercased()), serverEpoch: "e") == key)
        #expect(throws: EncryptionError.wrongRecoveryKey) { try wrapped.unwrap(recoveryKey: RecoveryKey.random(), serverEpoch: "e") }
        #expect(throws: EncryptionError.wrongRecoveryKey) { try wrapped.unwrap(recoveryKey: recovery, serverEpoch: "f") }
        var swapped = wrapped
        swapped.keyID = try DataKey.random().keyID
        #expect(throws: EncryptionError.wrongRecoveryKey) { try swapped.unwrap(recoveryKey: recovery, serverEpoch: "e") }
        swapped.keyID = "not hex"
        #expect(throws: EncryptionError.malformed("a wrapped key's ID is 32 lower-case hex characters")) {
            try swapped.unwrap(recoveryKey: recovery, serverEpoch: "e")
        }
        #expect(throws: EncryptionError.malformed("a server epoch holds no NUL")) {
            try wrapped.unwrap(recoveryKey: recovery, serverEpoch: "e\0")
        }
        #expect(throws: EncryptionError.self) { try wrapped.unwrap(passphrase: [], serverEpoch: "e") }
        #expect(try JSONDecoder().decode(WrappedKey.self, from: JSONEncoder().encode(wrapped)) == wrapped)
    }

    @Test func recoveryKeyText() throws {
        let recovery = try RecoveryKey(secret: Array(0..<32))
        let text = recovery.text
        let groups = text.split(separator: "-")
        #expect(groups.count == 11 && groups.allSatisfy { $0.count == 5 })
        #expect(text.allSatisfy { $0 == "-" || "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains($0) })
        #expect(try RecoveryKey(text: text) == recovery)
        // Case, spaces, dashes and the confusable letters are forgiven.
        #expect(text.contains("0") && text.contains("1"))
        let sloppy =
            " "
            + text.replacingOccurrences(of: "-", with: " ").replacingOccurrences(of: "0", with: "o")
            .replacingOccurrences(of: "1", with: "l").lowercased() + "\n"
        #expect(try RecoveryKey(text: sloppy) == recovery)
        #expect(try RecoveryKey(text: text.replacingOccurrences(of: "1", with: "I").replacingOccurrences(of: "-", with: "")) == recovery)
        let random = try RecoveryKey.random()
        #expect(try RecoveryKey(text: random.text) == random)

        // One character changed: the checksum says so.
        let typo = "1" + text.dropFirst()
        #expect(text.first == "0")
        #expect(throws: EncryptionError.malformed("the recovery key's checksum does not match: a character is mistyped")) {
            try RecoveryKey(text: typo)
        }
        #expect(throws: EncryptionError.malformed("a recovery key has 55 letters and digits, not 54")) {
            try RecoveryKey(text: String(text.dropLast()))
        }
        #expect(throws: EncryptionError.malformed("a recovery key has 55 letters and digits, not 0")) { try RecoveryKey(text: "") }
        #expect(throws: EncryptionError.self) { try RecoveryKey(text: "U" + text.dropFirst()) }
        #expect(throws: EncryptionError.self) { try RecoveryKey(text: "é" + text.dropFirst()) }
        #expect(!"\(recovery)".contains(String(text.prefix(5))))
    }

    // MARK: The local key file

    @Test func localKeyFileRoundTrip() throws {
        let database = makeDatabase()
        defer { try? FileManager.default.removeItem(atPath: database) }
        #expect(try LocalKeyFile.load(databasePath: database) == nil)
        let key = try DataKey.random()
        try LocalKeyFile.save(key, databasePath: database)
        let path = LocalKeyFile.path(databasePath: database)
        #expect(path == database + "/sync/key")
        var status = stat()
        #expect(stat(path, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
        #expect(try LocalKeyFile.load(databasePath: database) == key)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: String])
        #expect(object == ["keyID": key.keyID, "key": Data(key.key.bytes).base64EncodedString()])
        try LocalKeyFile.remove(databasePath: database)
        #expect(try LocalKeyFile.load(databasePath: database) == nil)
        try LocalKeyFile.remove(databasePath: database)
    }

    @Test func localKeyFileReadableByOthersIsRefused() throws {
        let database = makeDatabase()
        defer { try? FileManager.default.removeItem(atPath: database) }
        try LocalKeyFile.save(try DataKey.random(), databasePath: database)
        let path = LocalKeyFile.path(databasePath: database)
        #expect(chmod(path, 0o644) == 0)
        let reason = try #require(stateReason { () throws(SyncError) in _ = try LocalKeyFile.load(databasePath: database) })
        #expect(reason.contains("644") && reason.contains("chmod 600 \(path)"))
        #expect(chmod(path, 0o640) == 0)
        #expect(stateReason { () throws(SyncError) in _ = try LocalKeyFile.load(databasePath: database) } != nil)
        #expect(chmod(path, 0o600) == 0)
        #expect(try LocalKeyFile.load(databasePath: database) != nil)
    }

    /// A key file of another user is refused, as ssh refuses one (only root can give a file away).
    @Test(.enabled(if: geteuid() == 0, "only root can chown a file to another user"))
    func localKeyFileOfAnotherUserIsRefused() throws {
        let database = makeDatabase()
        defer { try? FileManager.default.removeItem(atPath: database) }
        try LocalKeyFile.save(try DataKey.random(), databasePath: database)
        let path = LocalKeyFile.path(databasePath: database)
        #expect(chown(path, 65_534, 65_534) == 0)
        let reason = try #require(stateReason { () throws(SyncError) in _ = try LocalKeyFile.load(databasePath: database) })
        #expect(reason.contains("belongs to uid 65534, not to this user"))
    }

    @Test(arguments: [
        ("not json", "damaged key file: not"),
        (#"{"keyID": "00", "key": "AAAA"}"#, "damaged key file: malformed: a key has 32 bytes, not 3"),
        (##"{"keyID": "00", "key": "#%"}"##, "damaged key file: the key is not base64"),
        (#"{"key": "AAAA"}"#, "damaged key file: not"),
    ])
    func damagedLocalKeyFileIsRefused(content: String, reason: String) throws {
        let database = makeDatabase()
        defer { try? FileManager.default.removeItem(atPath: database) }
        try LocalKeyFile.save(try DataKey.random(), databasePath: database)
        try DurableFile.write(Data(content.utf8), to: LocalKeyFile.path(databasePath: database))
        let found = try #require(stateReason { () throws(SyncError) in _ = try LocalKeyFile.load(databasePath: database) })
        #expect(found.hasPrefix(reason))
    }

    /// A key file whose ID is not its key's (another key's ID, or edited) is refused.
    @Test func localKeyFileWithAnotherKeyIDIsRefused() throws {
        let database = makeDatabase()
        defer { try? FileManager.default.removeItem(atPath: database) }
        let key = try DataKey.random()
        let other = try DataKey.random()
        try LocalKeyFile.save(key, databasePath: database)
        let json = #"{"keyID": "\#(other.keyID)", "key": "\#(Data(key.key.bytes).base64EncodedString())"}"#
        try DurableFile.write(Data(json.utf8), to: LocalKeyFile.path(databasePath: database))
        let found = try #require(stateReason { () throws(SyncError) in _ = try LocalKeyFile.load(databasePath: database) })
        #expect(found.contains("its key has the ID \(key.keyID), not \(other.keyID)"))
    }

    // MARK: Helpers

    /// A fresh directory standing for a database.
    private func makeDatabase() -> String { makeTemporaryDirectory("encryption") }

    /// The error `body` throws, nil when it throws none.
    private func encryptionError(_ body: () throws(EncryptionError) -> Void) -> EncryptionError? {
        do { try body() } catch { return error }
        return nil
    }

    /// The reason of the ``SyncError/state(path:reason:)`` `body` throws; nil for none or another error.
    private func stateReason(_ body: () throws(SyncError) -> Void) -> String? {
        do { try body() } catch {
            if case .state(_, let reason) = error { return reason }
        }
        return nil
    }
}

/// The bytes of a hex string (test vectors).
private func bytes(_ hex: String) -> [UInt8] {
    var result: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        result.append(UInt8(hex[index..<next], radix: 16) ?? 0)
        index = next
    }
    return result
}

/// Lower-case hex of `bytes`.
private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

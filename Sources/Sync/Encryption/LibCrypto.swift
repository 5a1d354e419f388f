import CCrypto

/// libcrypto's cipher functions (AES-256-GCM, HMAC-SHA256, scrypt, the random generator),
/// loaded the first time encryption is used: `ccrypto_load_ciphers` in CCrypto (`dlopen` of
/// libcrypto.so.3, then `dlsym` of each function), so that a command which never encrypts does
/// not pay for loading and binding libcrypto at its start (as RecordStore's `SHA256.crypto`).
///
/// Unlike the digest, whose callers cannot fail, a missing library is an error the sync engine
/// reports (``EncryptionError/library(_:)``): the process goes on.
enum LibCrypto {
    /// The loaded table, or why it could not be loaded. Computed once (a static's lazy
    /// initialisation, which Swift runs once under its own lock) and never changed after.
    static let loaded: Result<ccrypto_cipher_library, EncryptionError> = {
        var library = ccrypto_cipher_library()
        if let failure = ccrypto_load_ciphers(&library) {
            return .failure(.library("cannot load \(CCRYPTO_SONAME): \(String(cString: failure))"))
        }
        return .success(library)
    }()

    /// `EVP_CIPHER_CTX_ctrl`'s request for GCM's tag after encrypting (the one file that imports
    /// CCrypto names libcrypto's constants for the others).
    static let gcmGetTag = EVP_CTRL_GCM_GET_TAG
    /// `EVP_CIPHER_CTX_ctrl`'s request that sets the expected tag before the decryption's final call.
    static let gcmSetTag = EVP_CTRL_GCM_SET_TAG

    /// The loaded table.
    ///
    /// - Throws: ``EncryptionError/library(_:)`` when libcrypto or one of its functions is missing.
    static func library() throws(EncryptionError) -> ccrypto_cipher_library {
        try loaded.get()
    }

    /// Throws unless `result` is 1, libcrypto's success for `call`.
    ///
    /// - Throws: ``EncryptionError/library(_:)`` naming `call` and libcrypto's reason.
    static func check(_ result: Int32, _ call: String, _ library: ccrypto_cipher_library) throws(EncryptionError) {
        if result != 1 { throw failure(call, library) }
    }

    /// The error of the failed libcrypto `call`: its name and the first reason of the thread's
    /// error queue (`ERR_get_error`, `ERR_error_string_n`), which is then emptied
    /// (`ERR_clear_error`) so that no later call reads a stale reason.
    static func failure(_ call: String, _ library: ccrypto_cipher_library) -> EncryptionError {
        let code = library.ERR_get_error()
        library.ERR_clear_error()
        guard code != 0 else { return .library("\(call) failed") }
        var text = [CChar](repeating: 0, count: 256)
        library.ERR_error_string_n(code, &text, text.count)
        let reason = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return .library("\(call) failed: \(reason)")
    }

    /// `bytes`, or a one-byte array when it is empty: what to pass a C call along with the length
    /// `bytes.count`, so that its pointer is never null even for a length of 0 (Swift does not
    /// promise a non-null pointer for an empty array, and some libcrypto calls refuse null).
    static func pointable(_ bytes: [UInt8]) -> [UInt8] {
        bytes.isEmpty ? [0] : bytes
    }
}

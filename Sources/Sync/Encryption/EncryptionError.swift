/// Why an encryption primitive failed: the library, the data, the parameters or the secret.
///
/// Thrown by the primitives of end-to-end encrypted sync (``AEAD``, ``KeyedHash``,
/// ``KeyDerivation``, ``DataKey``, ``WrappedKey``, ``RecoveryKey``). Bytes from the server are
/// hostile input: every way they can be wrong is one of these cases, never a trap.
enum EncryptionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libcrypto could not be loaded, or one of its calls failed (the message says which and why).
    case library(String)
    /// AEAD authentication failed: the wrong key, bytes changed, or the wrong associated data (a
    /// sealed value moved to another row or version).
    case cannotOpen
    /// Too short, a bad length, a bad encoding: the message says what.
    case malformed(String)
    /// Key derivation parameters refused because they would take too much memory or time (a
    /// server could otherwise make every client allocate gigabytes): the message says what was
    /// asked and the bound.
    case kdfOutOfBounds(String)
    /// Unwrapping a data key with a passphrase failed: the wrong passphrase, or a wrapped key
    /// that belongs to another server epoch or was changed.
    case wrongPassphrase
    /// Unwrapping a data key with a recovery key failed, as ``wrongPassphrase``.
    case wrongRecoveryKey

    /// A sentence for the user.
    var description: String {
        switch self {
        case .library(let message): "libcrypto: \(message)"
        case .cannotOpen: "cannot decrypt: the wrong key, or the data was changed or moved"
        case .malformed(let message): "malformed: \(message)"
        case .kdfOutOfBounds(let message): "key derivation parameters refused: \(message)"
        case .wrongPassphrase: "wrong passphrase (or the wrapped key was made for another server, or changed)"
        case .wrongRecoveryKey: "wrong recovery key (or the wrapped key was made for another server, or changed)"
        }
    }
}

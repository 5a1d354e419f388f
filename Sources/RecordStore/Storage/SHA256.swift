import CCrypto
import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// SHA-256 (FIPS 180-4) for content-addressed assets, computed by libcrypto (Linux has no Foundation crypto).
///
/// One-shot: ``hash(_:)-(Data)`` and ``hexDigest(_:)``; streaming: ``Hasher``.
package enum SHA256 {
    /// The digest length in bytes.
    package static let digestByteCount = 32
    /// The block length in bytes.
    package static let blockByteCount = 64

    /// libcrypto's SHA-256 functions, loaded the first time a digest is taken (`dlopen` of
    /// libcrypto.so.3, `ccrypto_load` in CCrypto): linked, libcrypto cost every command 2.4-3.0 ms
    /// of CPU at its start, binding its thousands of symbols (docs/benchmarks.md, "Start-up").
    /// Computed once (a global's lazy initialisation, which Swift runs once under its own lock)
    /// and never changed after.
    ///
    /// When libcrypto cannot be loaded the process says so and exits with status 127, as it did
    /// when libcrypto was linked (the dynamic loader then refused to start it): a digest cannot
    /// be taken without it, and the callers, which never failed, are not asked to handle it.
    static let crypto: ccrypto_library = {
        var library = ccrypto_library()
        if let failure = ccrypto_load(&library) {
            let message = "notesfs: cannot load \(CCRYPTO_SONAME) (for SHA-256): \(String(cString: failure))\n"
            _ = message.withCString { write(STDERR_FILENO, $0, strlen($0)) }
            exit(127)
        }
        return library
    }()

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
    ///
    /// libcrypto's `SHA256_Init`/`SHA256_Update`/`SHA256_Final` (through ``SHA256/crypto``) over a
    /// `SHA256_CTX` held by value (a plain C struct: copying a hasher copies its state, as before).
    package struct Hasher: Sendable {
        private var context = SHA256_CTX()

        package init() {
            _ = SHA256.crypto.SHA256_Init(&context)
        }

        /// Feeds `bytes`.
        package mutating func update(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, bytes.count > 0 else { return }
            _ = SHA256.crypto.SHA256_Update(&context, base, bytes.count)
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

        /// Returns the 32-byte digest. The hasher is reset: further use starts a new, unrelated digest.
        package mutating func finalize() -> [UInt8] {
            var digest = [UInt8](repeating: 0, count: SHA256.digestByteCount)
            _ = SHA256.crypto.SHA256_Final(&digest, &context)
            self = Hasher()
            return digest
        }
    }
}

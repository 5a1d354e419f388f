#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A failed system call: which call, on which path (or what it was done to), and its errno.
///
/// Each module above turns it into its own error type at its boundary (the store's `io`, the
/// sync engine's `state`, the CLI's I/O error, the filesystem's `Errno`).
public struct SystemCallError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The call as messages name it, e.g. `open`, `write`, `fsync directory`.
    public var call: String
    public var path: String
    /// The positive C error number, e.g. `ENOSPC`.
    public var errno: Int32

    public init(_ call: String, path: String, errno: Int32) {
        self.call = call
        self.path = path
        self.errno = errno
    }

    /// The error of `call` on `path` from the current `errno`.
    public static func current(_ call: String, path: String) -> SystemCallError {
        SystemCallError(call, path: path, errno: Glibc.errno)
    }

    /// `strerror(3)` of the error number, e.g. "No space left on device".
    public var reason: String { String(cString: strerror(errno)) }

    public var description: String { "\(path): \(call): \(reason)" }
}

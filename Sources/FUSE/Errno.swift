/// `Errno`: the typed POSIX error a `FileSystem` operation throws; the module replies with it.

import Glibc

/// A POSIX error number with spelled-out names, thrown by `FileSystem` operations.
///
/// Every operation of `FileSystem` is declared `throws(Errno)`: the filesystem maps its own errors
/// to an errno at its boundary (see `init(_:)` for a catch-all that maps anything else to `EIO`).
public struct Errno: Error, Hashable, Sendable, RawRepresentable, CustomStringConvertible {
    /// The positive C error number, e.g. `ENOENT`.
    public var rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Maps any error to an errno: an `Errno` passes through, anything else becomes `EIO`.
    public init(_ error: any Error) {
        self = (error as? Errno) ?? .io
    }

    /// `ENOENT`: no such file or directory.
    public static let noEntry = Errno(rawValue: ENOENT)
    /// `EEXIST`: file exists.
    public static let exists = Errno(rawValue: EEXIST)
    /// `ENOTEMPTY`: directory not empty.
    public static let notEmpty = Errno(rawValue: ENOTEMPTY)
    /// `EISDIR`: is a directory.
    public static let isDirectory = Errno(rawValue: EISDIR)
    /// `ENOTDIR`: not a directory.
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    /// `EINVAL`: invalid argument.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// `ENAMETOOLONG`: file name too long.
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    /// `EPERM`: operation not permitted.
    public static let permissionDenied = Errno(rawValue: EPERM)
    /// `EACCES`: permission denied by access mode.
    public static let accessDenied = Errno(rawValue: EACCES)
    /// `EIO`: input/output error.
    public static let io = Errno(rawValue: EIO)
    /// `ESTALE`: stale file handle (inode no longer known).
    public static let stale = Errno(rawValue: ESTALE)
    /// `ENODATA`: no such extended attribute.
    public static let noAttribute = Errno(rawValue: ENODATA)
    /// `ERANGE`: result does not fit the caller's buffer.
    public static let rangeError = Errno(rawValue: ERANGE)
    /// `EOPNOTSUPP`: operation not supported.
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)
    /// `ENOSYS`: operation not implemented (the kernel stops sending some operations after it).
    public static let notImplemented = Errno(rawValue: ENOSYS)
    /// `ENOSPC`: no space left on device.
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// `EBADF`: bad file descriptor / handle.
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// `EROFS`: read-only filesystem.
    public static let readOnly = Errno(rawValue: EROFS)
    /// `EXDEV`: cross-device link.
    public static let crossDevice = Errno(rawValue: EXDEV)
    /// `EBUSY`: device or resource busy.
    public static let busy = Errno(rawValue: EBUSY)
    /// `EFBIG`: file too large.
    public static let fileTooLarge = Errno(rawValue: EFBIG)
    /// `EMLINK`: too many links.
    public static let tooManyLinks = Errno(rawValue: EMLINK)
    /// `ELOOP`: too many levels of symbolic links.
    public static let tooManySymbolicLinks = Errno(rawValue: ELOOP)
    /// `EINTR`: interrupted.
    public static let interrupted = Errno(rawValue: EINTR)
    /// `ENOMEM`: out of memory.
    public static let noMemory = Errno(rawValue: ENOMEM)
    /// `ENOTCONN`: transport endpoint is not connected (dead FUSE mount).
    public static let notConnected = Errno(rawValue: ENOTCONN)
    /// `EAGAIN`: try again.
    public static let tryAgain = Errno(rawValue: EAGAIN)

    /// The calling thread's C `errno` (read right after a failed C call).
    public static var current: Errno { Errno(rawValue: errno) }

    public var description: String {
        "\(String(cString: strerror(rawValue))) (errno \(rawValue))"
    }
}

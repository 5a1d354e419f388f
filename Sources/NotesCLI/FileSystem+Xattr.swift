import CXattr
import Foundation
import Notes
import POSIX

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A file's `user.` extended attributes, read by `import` and written by `export` (through an open
/// descriptor, so a name swapped meanwhile is never followed). Other namespaces stay in the
/// database: `trusted.` and `security.` need root and mean something only where they were set.
extension FileSystem {
    /// The `user.` attributes of open file `fd` (none where the filesystem keeps none).
    /// - Throws: `CLIError` when they cannot be read, or exceed what a note may keep.
    static func userAttributes(of fd: Int32, path: @autoclosure () -> String) throws(CLIError) -> ExtendedAttributes {
        var attributes = ExtendedAttributes()
        var names = [CChar](repeating: 0, count: 65_536)
        let length = Syscall.retrying { flistxattr(fd, &names, names.count) }
        if length < 0 {
            if errno == ENOTSUP || errno == ENOSYS { return attributes }
            throw CLIError.system("listxattr", path(), errno: errno)
        }
        for raw in names.prefix(length).split(separator: 0) {
            let name = String(decoding: raw.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard name.hasPrefix("user.") else { continue }
            var value = [UInt8](repeating: 0, count: ExtendedAttributes.maximumValueBytes)
            let count = Syscall.retrying { fgetxattr(fd, name, &value, value.count) }
            guard count >= 0 else {
                if errno == ENODATA { continue }  // removed meanwhile
                throw CLIError.system("getxattr \(name)", path(), errno: errno)
            }
            do { try attributes.set(name, to: Array(value.prefix(count))) } catch {
                throw CLIError(.io, path(), "extended attribute \(name): \(error)")
            }
        }
        return attributes
    }

    /// Sets the `user.` attributes of `attributes` on `name` in `directory` (a regular file or a
    /// directory, opened without following a symlink).
    /// - Returns: false when the target filesystem keeps no user attributes (nothing is set).
    /// - Throws: `CLIError` for any other failure.
    static func setUserAttributes(
        _ attributes: ExtendedAttributes, of name: String, in directory: Int32, path: @autoclosure () -> String
    ) throws(CLIError) -> Bool {
        let names = attributes.names.filter { $0.hasPrefix("user.") }
        guard !names.isEmpty else { return true }
        let fd = Syscall.retrying { openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else { throw CLIError.system("open", path(), errno: errno) }
        defer { close(fd) }
        for attribute in names {
            let value = attributes[attribute] ?? []
            guard Syscall.retrying({ fsetxattr(fd, attribute, value, value.count, 0) }) == 0 else {
                if errno == ENOTSUP { return false }
                throw CLIError.system("setxattr \(attribute)", path(), errno: errno)
            }
        }
        return true
    }
}

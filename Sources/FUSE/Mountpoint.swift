/// `Mountpoint`: checks a directory before mounting (exists, is a directory, not already mounted).

import Foundation
import Glibc

/// Mountpoint checks and helpers.
public enum Mountpoint {
    /// Resolves `path` to an absolute, symlink-free path and refuses unusable mountpoints: missing,
    /// not a directory, a dead FUSE mount, or already a live mountpoint (mounting again would stack
    /// a second mount on top).
    /// - Returns: the resolved path.
    /// - Throws: `FUSEError.mountpointMissing`, `.mountpointNotDirectory`, `.staleMount`, `.alreadyMounted`.
    public static func validate(_ path: String) throws(FUSEError) -> String {
        var st = stat()
        if stat(path, &st) != 0 {
            let errno = Errno.current
            switch errno {
            case .notConnected: throw .staleMount(path)
            case .noEntry: throw .mountpointMissing(path)
            case .notDirectory: throw .mountpointNotDirectory(path)
            default: throw .mountpointMissing("\(path) (\(errno))")
            }
        }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw .mountpointNotDirectory(path) }
        guard let resolved = realpath(path, nil) else { throw .mountpointMissing(path) }
        let absolute = String(cString: resolved)
        free(resolved)
        if isMountpoint(absolute) { throw .alreadyMounted(absolute) }
        return absolute
    }

    /// True when `path` (absolute, resolved) is a mountpoint: listed in /proc/self/mountinfo, or on
    /// another device than its parent directory.
    public static func isMountpoint(_ path: String) -> Bool {
        if mountedPaths().contains(path) { return true }
        var own = stat()
        var parent = stat()
        guard stat(path, &own) == 0, stat(path + "/..", &parent) == 0 else { return false }
        return own.st_dev != parent.st_dev
    }

    /// The mountpoints in /proc/self/mountinfo (field 5, with `\040`-style escapes decoded).
    static func mountedPaths() -> Set<String> {
        // Read to its end: `String(contentsOfFile:)` stops at the first 4 KiB of a /proc file
        // (its size is 0), which holds about 30 mounts.
        guard let data = FileHandle(forReadingAtPath: "/proc/self/mountinfo")?.readDataToEndOfFile() else { return [] }
        let text = String(decoding: data, as: UTF8.self)
        var paths = Set<String>()
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            if fields.count > 4 { paths.insert(unescape(fields[4])) }
        }
        return paths
    }

    /// Decodes mountinfo's octal escapes (`\040` for a space).
    static func unescape(_ field: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "\\"), utf8.count >= 3,
                let value = UInt8(String(decoding: utf8.prefix(3), as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

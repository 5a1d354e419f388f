/// Reading, writing and running commands in a child mount by paths relative to its root.

import Foundation
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

extension ChildMount {
    /// The text of the file at `name` in the mount, nil when it cannot be read.
    public func read(_ name: String) -> String? { try? String(contentsOfFile: path + "/" + name, encoding: .utf8) }

    public func write(_ name: String, _ text: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + name)) }

    public func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path + "/" + name) }

    /// Whether `name` has a directory entry in the mount, whatever its type (`lstat`: a dangling
    /// symlink exists too).
    public func hasEntry(_ name: String) -> Bool {
        var st = stat()
        return lstat(path + "/" + name, &st) == 0
    }

    /// The bytes of the file at `name`, nil when it cannot be read.
    public func bytes(_ name: String) -> Data? { FileManager.default.contents(atPath: path + "/" + name) }

    /// The value of extended attribute `key` of `name` (`getfattr`: Glibc's module lacks
    /// `<sys/xattr.h>`), nil when it has none.
    public func xattr(_ name: String, _ key: String) -> String? {
        let result = try? TestSupport.run(["/usr/bin/getfattr", "-h", "--absolute-names", "-n", key, "--only-values", path + "/" + name])
        guard let result, result.status == 0 else { return nil }
        return result.out
    }

    /// The record name of the entry at `name` (`user.notesfs.recordName`).
    public func recordName(_ name: String) -> String? { xattr(name, "user.notesfs.recordName") }

    /// Runs `command` with `/bin/sh -c` in the mount's root (HOME=/tmp and TERM=dumb for editors,
    /// TZ=UTC for the times `stat` and `touch` show and read); its exit status and output (stdout
    /// and stderr).
    @discardableResult
    public func shell(_ command: String) throws -> (status: Int32, out: String) {
        let result = try sh("cd \(shellQuoted(path)) && HOME=/tmp TERM=dumb TZ=UTC; export HOME TERM TZ; \(command)", mergingErrors: true)
        return (result.status, result.out)
    }

    /// Runs `command` as ``shell(_:)`` does; records an issue with its output when it fails.
    public func run(_ command: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try shell(command)
        #expect(result.status == 0, "\(command): \(result.out)", sourceLocation: sourceLocation)
    }
}

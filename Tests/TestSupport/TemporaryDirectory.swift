/// Fresh temporary directories: every test gets its own (tests run in parallel).

import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Creates a fresh directory `PREFIX.XXXXXX` with `mkdtemp` in `base` (the temporary directory
/// unless given).
public func makeTemporaryDirectory(_ prefix: String = "notesfstest", base: String = NSTemporaryDirectory()) -> String {
    reportBrokenPipes()
    let directory = base.hasSuffix("/") ? base : base + "/"
    var template = Array((directory + "\(prefix).XXXXXX").utf8CString)
    let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    precondition(result != nil, "mkdtemp failed in \(base)")
    return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// `text` quoted for `/bin/sh`.
public func shellQuoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }

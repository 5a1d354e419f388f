/// `FileName`: a directory entry name as the raw bytes the kernel sent.

import Glibc

/// One path component as raw bytes; `string` is nil when the bytes are not valid UTF-8.
public struct FileName: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The name's bytes, without a terminating NUL.
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }

    public init(_ string: String) { self.bytes = Array(string.utf8) }

    public init(stringLiteral value: String) { self.init(value) }

    /// Copies a NUL-terminated C string.
    init(cString: UnsafePointer<CChar>) {
        let length = Int(strlen(cString))
        self.bytes = cString.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    /// The name decoded as UTF-8, or nil when the bytes are not valid UTF-8.
    public var string: String? { String(validating: bytes, as: UTF8.self) }

    /// True for `.` and `..`.
    public var isDotOrDotDot: Bool { bytes == [0x2E] || bytes == [0x2E, 0x2E] }

    /// The UTF-8 string, or the bytes with invalid sequences replaced, for messages.
    public var description: String { String(decoding: bytes, as: UTF8.self) }

    /// Calls `body` with the name as a NUL-terminated C string.
    func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        var terminated = bytes
        terminated.append(0)
        return try terminated.withUnsafeBufferPointer {
            try $0.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }
}

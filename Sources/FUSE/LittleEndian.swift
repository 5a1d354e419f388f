/// Integers in the kernel's byte order (little-endian on every machine FUSE runs on here), for
/// the requests and replies libfuse does not encode for us (Tmpfile.swift, Operations+Ioctl.swift).
enum LittleEndian {
    /// The `size` bytes of `value`, low first (zero-extended or cut to `size`).
    static func bytes<T: FixedWidthInteger>(_ value: T, size: Int = MemoryLayout<T>.size) -> [UInt8] {
        let wide = UInt64(truncatingIfNeeded: value)
        return (0..<size).map { $0 < 8 ? UInt8(truncatingIfNeeded: wide >> (8 * UInt64($0))) : 0 }
    }

    /// The `T` at `offset` of `bytes` (the caller has checked that it fits).
    static func load<T: FixedWidthInteger>(_ type: T.Type, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> T {
        T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

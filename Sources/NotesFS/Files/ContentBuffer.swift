import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The bytes of an open file: in memory, moved to an unlinked temp file past 8 MiB so that a large
/// file does not grow memory without bound.
// @unchecked Sendable: instances live in `FileSystemState` (directly or through `OpenFile` and
// `ScratchFile`) and are only used while holding `NotesFileSystem.state`'s lock.
final class ContentBuffer: @unchecked Sendable {
    static let spillThreshold = 8 << 20

    private var memory: [UInt8]
    private var spillFD: Int32 = -1
    private(set) var count: Int

    init(_ bytes: [UInt8]) {
        memory = bytes
        count = bytes.count
        if count > Self.spillThreshold { try? spill() }
    }

    deinit {
        if spillFD >= 0 { close(spillFD) }
    }

    var isSpilled: Bool { spillFD >= 0 }

    private func spill() throws {
        var template = Array("/tmp/notesfs-spill-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw POSIXError(.EIO) }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        let written = memory.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == memory.count else {
            close(fd)
            throw POSIXError(.EIO)
        }
        spillFD = fd
        memory = []
    }

    func read(offset: Int, size: Int) -> [UInt8] {
        guard offset < count else { return [] }
        let end = min(count, offset + size)
        if spillFD < 0 { return Array(memory[offset..<end]) }
        var bytes = [UInt8](repeating: 0, count: end - offset)
        let n = bytes.withUnsafeMutableBytes { pread(spillFD, $0.baseAddress, $0.count, off_t(offset)) }
        if n < bytes.count { bytes.removeSubrange(max(0, n)...) }
        return bytes
    }

    /// Writes at `offset`, filling any gap past the end with zeros.
    func write(offset: Int, _ data: UnsafeRawBufferPointer) throws {
        let end = offset + data.count
        if spillFD < 0, end > Self.spillThreshold { try spill() }
        if spillFD >= 0 {
            let n = pwrite(spillFD, data.baseAddress, data.count, off_t(offset))
            guard n == data.count else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            count = max(count, end)
            return
        }
        if end > memory.count { memory.append(contentsOf: repeatElement(0, count: end - memory.count)) }
        memory.withUnsafeMutableBytes { target in
            if let base = data.baseAddress, data.count > 0 { (target.baseAddress! + offset).copyMemory(from: base, byteCount: data.count) }
        }
        count = memory.count
    }

    func truncate(_ size: Int) throws {
        if spillFD >= 0 {
            guard ftruncate(spillFD, off_t(size)) == 0 else { throw POSIXError(.EIO) }
            count = size
            return
        }
        if size < memory.count { memory.removeSubrange(size...) } else { memory.append(contentsOf: repeatElement(0, count: size - memory.count)) }
        count = size
        if count > Self.spillThreshold { try spill() }
    }

    /// All bytes (for a save).
    func allBytes() -> [UInt8] { spillFD < 0 ? memory : read(offset: 0, size: count) }
}

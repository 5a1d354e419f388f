import FUSE
import Foundation
import POSIX
import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The bytes of an open file: in memory up to ``memoryLimit`` (1 MiB), beyond it in an unlinked
/// temp file in the database's temp directory, so that memory does not grow with the file.
///
/// Growing the file (by `truncate` or by a write far past the end) is `ftruncate` on the temp
/// file: sparse, costing neither memory nor disk. Sizes are `Int64` and checked against
/// ``maximumSize`` before any arithmetic, so no offset a request can send overflows.
///
/// Memory bound: one buffer holds at most ``memoryLimit`` bytes in memory; every other byte is in
/// the temp file. Reads copy at most the requested size (the kernel's `max_read`).
///
/// Thread safety: the storage (the in-memory bytes, the temp file descriptor and the size) is
/// guarded by `storage`, a leaf lock (nothing else is locked while holding it), so a buffer may be
/// read and written from any thread. Operations that must see the bytes unchanged across several
/// calls (a save that streams the temp file into an asset) are serialised by the owner's
/// ``OpenFile/operationLock``.
final class ContentBuffer: Sendable {
    /// The largest file the mount stores: 64 GiB. Larger sizes and write ends get `EFBIG`.
    static let maximumSize: Int64 = 64 << 30
    /// Bytes kept in memory before the content moves to a temp file.
    static let memoryLimit = 1 << 20

    private struct Storage {
        /// The bytes while in memory (`descriptor < 0`); empty once spilled.
        var memory: [UInt8]
        /// The unlinked temp file holding the bytes, or -1 while in memory.
        var descriptor: Int32 = -1
        var count: Int64
    }

    /// Guards the bytes, the temp file and the size (a leaf lock).
    private let storage: Mutex<Storage>
    /// Where the temp file is created (the database's temp directory: same filesystem as assets).
    let spillDirectory: String

    /// A buffer holding `bytes` (moved to a temp file at once when larger than ``memoryLimit``).
    init(_ bytes: [UInt8] = [], spillDirectory: String) {
        self.spillDirectory = spillDirectory
        storage = Mutex(Storage(memory: bytes, count: Int64(bytes.count)))
        if bytes.count > Self.memoryLimit {
            storage.withLock { try? Self.spill(&$0, into: spillDirectory) }
        }
    }

    /// A buffer over an already open temp file of `count` bytes (takes ownership of `descriptor`).
    private init(descriptor: Int32, count: Int64, spillDirectory: String) {
        self.spillDirectory = spillDirectory
        storage = Mutex(Storage(memory: [], descriptor: descriptor, count: count))
    }

    deinit {
        storage.withLock { if $0.descriptor >= 0 { Glibc.close($0.descriptor) } }
    }

    /// The size in bytes.
    var count: Int64 { storage.withLock { $0.count } }

    var isSpilled: Bool { storage.withLock { $0.descriptor >= 0 } }

    /// The 512-byte blocks the bytes take (`st_blocks`, see ``NotesFileSystem/storedBlocks(_:)``):
    /// in memory every byte is held, so the size rounded up; spilled, what the temp file has
    /// allocated (`fstat`'s `st_blocks`: holes cost nothing), never more than the size rounded up.
    var storedBlocks: UInt64 {
        storage.withLock { storage in
            let whole = Attributes.blocks(forSize: UInt64(clamping: storage.count))
            var status = Glibc.stat()
            guard storage.descriptor >= 0, fstat(storage.descriptor, &status) == 0 else { return whole }
            return min(whole, UInt64(clamping: status.st_blocks))
        }
    }

    /// Creates an unlinked temp file in `directory` (`mkstemp` + `unlink`).
    /// - Throws: the `mkstemp` errno (`ENOSPC`, `EACCES`, …) as an `Errno`.
    static func makeTemporaryFile(in directory: String) throws(Errno) -> Int32 {
        var template = Array((directory + "/notesfs-buffer-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { mkstemp($0) } ?? -1
        }
        guard fd >= 0 else { throw Errno.current }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        template.withUnsafeBufferPointer { buffer in _ = buffer.baseAddress.map { unlink($0) } }
        return fd
    }

    /// Moves the in-memory bytes to a new temp file.
    private static func spill(_ storage: inout Storage, into directory: String) throws(Errno) {
        guard storage.descriptor < 0 else { return }
        let fd = try makeTemporaryFile(in: directory)
        do throws(Errno) {
            let memory = storage.memory
            try memory.withUnsafeBytes { bytes in Result { () throws(Errno) in try writeAll(fd, bytes, at: 0) } }.get()
        } catch {
            Glibc.close(fd)
            throw error
        }
        storage.descriptor = fd
        storage.memory = []
    }

    /// Runs `body`, turning the POSIX layer's error into its errno.
    private static func mappingErrno<T>(_ body: () throws(SystemCallError) -> T) throws(Errno) -> T {
        do { return try body() } catch { throw Errno(rawValue: error.errno) }
    }

    /// `ftruncate` (sparse growth).
    static func resize(_ fd: Int32, to size: Int64) throws(Errno) {
        try mappingErrno { () throws(SystemCallError) in try Syscall.ftruncate(fd, size, path: "content buffer") }
    }

    /// `pwrite` until every byte is written (`EIO` when a write makes no progress).
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(Errno) {
        try mappingErrno { () throws(SystemCallError) in try Syscall.writeAll(fd, bytes, at: offset, path: "content buffer") }
    }

    /// `pread` of up to `count` bytes into `buffer`, short only at the end of the file.
    static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        try mappingErrno { () throws(SystemCallError) in try Syscall.readAll(fd, into: buffer, at: offset, path: "content buffer") }
    }

    /// ``readFully(_:into:at:)`` into an array.
    static func readFully(_ fd: Int32, into bytes: inout [UInt8], at offset: Int64) throws(Errno) -> Int {
        try bytes.withUnsafeMutableBytes { buffer in Result { () throws(Errno) in try readFully(fd, into: buffer, at: offset) } }.get()
    }

    /// Up to `size` bytes from `offset` (fewer at the end of the file).
    /// - Throws: `EINVAL` for a negative offset or size, the `pread` errno.
    func read(offset: Int64, size: Int) throws(Errno) -> [UInt8] {
        guard offset >= 0, size >= 0 else { throw Errno.invalidArgument }
        return try storage.withLock { (storage) throws(Errno) -> [UInt8] in
            guard offset < storage.count else { return [] }
            let length = Int(min(Int64(size), storage.count - offset))
            if storage.descriptor < 0 {
                let start = Int(offset)
                return Array(storage.memory[start..<start + length])
            }
            var bytes = [UInt8](repeating: 0, count: length)
            let fd = storage.descriptor
            // Past the temp file's end (cannot happen: its size is `count`) the zeros stay.
            _ = try Self.readFully(fd, into: &bytes, at: offset)
            return bytes
        }
    }

    /// Writes `data` at `offset`; a gap past the end reads as zeros (sparse in the temp file).
    /// - Throws: `EFBIG` past ``maximumSize``, `EINVAL` for a negative offset, the `pwrite` errno.
    func write(offset: Int64, _ data: UnsafeRawBufferPointer) throws(Errno) {
        guard offset >= 0 else { throw Errno.invalidArgument }
        guard offset <= Self.maximumSize - Int64(data.count) else { throw Errno.fileTooLarge }
        let end = offset + Int64(data.count)
        let directory = spillDirectory
        try storage.withLock { (storage) throws(Errno) in
            if storage.descriptor < 0, end > Int64(Self.memoryLimit) { try Self.spill(&storage, into: directory) }
            if storage.descriptor >= 0 {
                try Self.writeAll(storage.descriptor, data, at: offset)
                storage.count = max(storage.count, end)
                return
            }
            let start = Int(offset)
            let stop = Int(end)
            if stop > storage.memory.count { storage.memory.append(contentsOf: repeatElement(0, count: stop - storage.memory.count)) }
            if let base = data.baseAddress, data.count > 0 {
                storage.memory.withUnsafeMutableBytes { target in
                    target.baseAddress.map { ($0 + start).copyMemory(from: base, byteCount: data.count) }
                }
            }
            storage.count = Int64(storage.memory.count)
        }
    }

    /// Sets the size: shorter drops bytes, longer reads as zeros (sparse: `ftruncate`).
    /// - Throws: `EFBIG` past ``maximumSize``, `EINVAL` for a negative size, the `ftruncate` errno.
    func truncate(_ size: Int64) throws(Errno) {
        guard size >= 0 else { throw Errno.invalidArgument }
        guard size <= Self.maximumSize else { throw Errno.fileTooLarge }
        let directory = spillDirectory
        try storage.withLock { (storage) throws(Errno) in
            if storage.descriptor < 0, size > Int64(Self.memoryLimit) { try Self.spill(&storage, into: directory) }
            if storage.descriptor >= 0 {
                try Self.resize(storage.descriptor, to: size)
                storage.count = size
                return
            }
            let target = Int(size)
            if target < storage.memory.count {
                storage.memory.removeSubrange(target...)
            } else {
                storage.memory.append(contentsOf: repeatElement(0, count: target - storage.memory.count))
            }
            storage.count = size
        }
    }

    /// Where a save reads the bytes from.
    enum Source {
        /// The bytes themselves (a buffer in memory: at most ``memoryLimit``).
        case bytes([UInt8])
        /// The first `count` bytes of the temp file open at `descriptor` (valid during the call).
        case file(descriptor: Int32, count: Int64)
    }

    /// Calls `body` with where the bytes are. The descriptor stays open for the call; the caller
    /// holds the owner's ``OpenFile/operationLock`` so that no write changes the bytes meanwhile.
    func withSource<T>(_ body: (Source) throws -> T) rethrows -> T {
        let source: Source = storage.withLock { storage in
            storage.descriptor < 0 ? .bytes(storage.memory) : .file(descriptor: storage.descriptor, count: storage.count)
        }
        return try withExtendedLifetime(self) { try body(source) }
    }

    /// All the bytes when there are at most `limit` of them (a note's inline text), else nil.
    func bytes(upTo limit: Int) throws(Errno) -> [UInt8]? {
        let size = count
        guard size <= Int64(limit) else { return nil }
        return try read(offset: 0, size: Int(size))
    }

    /// All bytes. Only for buffers known to be small; prefer ``withSource(_:)`` and ``bytes(upTo:)``.
    func allBytes() -> [UInt8] {
        let size = count
        guard size <= Int64(Int.max) else { return [] }
        return (try? read(offset: 0, size: Int(size))) ?? []
    }

    /// An independent copy of these bytes (a file copy for a spilled buffer: `copy_file_range`,
    /// falling back to a chunked `pread`/`pwrite` loop).
    func copy() throws(Errno) -> ContentBuffer {
        let directory = spillDirectory
        return try storage.withLock { (storage) throws(Errno) -> ContentBuffer in
            guard storage.descriptor >= 0 else { return ContentBuffer(storage.memory, spillDirectory: directory) }
            let fd = try Self.makeTemporaryFile(in: directory)
            do throws(Errno) {
                try Self.resize(fd, to: storage.count)
                try Self.copyRange(from: storage.descriptor, to: fd, count: storage.count)
            } catch {
                Glibc.close(fd)
                throw error
            }
            return ContentBuffer(descriptor: fd, count: storage.count, spillDirectory: directory)
        }
    }

    /// A buffer with the first `count` bytes of the file at `path` (an asset): read into memory
    /// when small, else copied into a temp file (sparse `ftruncate` to size first, so a source
    /// that ends early reads as zeros rather than failing).
    /// - Throws: `EIO`/`ENOENT` when the file cannot be opened or read, `EFBIG` past ``maximumSize``.
    static func load(fromFile path: String, count: Int64, spillDirectory: String) throws(Errno) -> ContentBuffer {
        guard count >= 0 else { throw Errno.io }
        guard count <= maximumSize else { throw Errno.fileTooLarge }
        let source = open(path, O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { throw Errno.current }
        defer { Glibc.close(source) }
        if count <= Int64(memoryLimit) {
            var bytes = [UInt8](repeating: 0, count: Int(count))
            _ = try readFully(source, into: &bytes, at: 0)
            return ContentBuffer(bytes, spillDirectory: spillDirectory)
        }
        let fd = try makeTemporaryFile(in: spillDirectory)
        do throws(Errno) {
            try resize(fd, to: count)
            try copyRange(from: source, to: fd, count: count)
        } catch {
            Glibc.close(fd)
            throw error
        }
        return ContentBuffer(descriptor: fd, count: count, spillDirectory: spillDirectory)
    }

    /// Copies the first `count` bytes of `source` to the same offsets of `target`, which is already
    /// `count` bytes long and reads as zeros: only the data ranges are copied (`SEEK_DATA`/`SEEK_HOLE`,
    /// so holes stay holes), in 1 MiB `pread`/`pwrite` chunks with short reads and writes looped.
    /// A source that ends early leaves the rest as zeros.
    /// - Throws: the `pread`/`pwrite` errno.
    static func copyRange(from source: Int32, to target: Int32, count: Int64) throws(Errno) {
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: memoryLimit, alignment: 16)
        defer { chunk.deallocate() }
        var offset: Int64 = 0
        while offset < count {
            // The next data range (a filesystem without SEEK_DATA: everything is data).
            let (dataStart, dataEnd) = Syscall.dataExtent(source, from: offset, size: count)
            guard dataStart < count else { return }  // only a hole is left
            offset = dataStart
            while offset < dataEnd {
                let piece = UnsafeMutableRawBufferPointer(rebasing: chunk[0..<Int(min(dataEnd - offset, Int64(memoryLimit)))])
                let n = try readFully(source, into: piece, at: offset)
                if n == 0 { return }
                try writeAll(target, UnsafeRawBufferPointer(rebasing: piece[0..<n]), at: offset)
                offset += Int64(n)
            }
        }
    }
}

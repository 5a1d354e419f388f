import Foundation
import Notes
import POSIX
import RecordStore

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The streamed copies between a note's or attachment's stored bytes (``StoredBytes``, as the mount
/// keeps them) and the files that `note cat`, `note edit`, `import` and `export` make.
///
/// A note whose bytes are valid UTF-8 of at most `Note.maxInlineTextBytes` keeps them as `text`;
/// any other note (Latin-1, UTF-16, binary, larger) and every attachment keeps them as the `content`
/// asset, as the mount does. Asset bytes are copied in 1 MiB chunks, never loaded whole.
extension StoredBytes {
    static let chunkSize = 1 << 20

    // MARK: Reading a file into the store

    /// Reads the file at `path` into the store: as `text` when `asNote` and its bytes are valid UTF-8
    /// of at most `Note.maxInlineTextBytes`, else streamed into an asset
    /// (`makeAsset(readingFrom:size:)`), losslessly.
    /// - Throws: an I/O ``CLIError`` for the file, the store's errors as ``CLIError``.
    static func read(_ path: String, asNote: Bool, database: RecordDatabase) throws(CLIError) -> StoredBytes {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError.system("open", path, errno: errno) }
        defer { close(fd) }
        return try read(fd, path: path, asNote: asNote, database: database)
    }

    /// Reads the open file `fd` (named `path` in messages) into the store, as ``read(_:asNote:database:)``.
    static func read(_ fd: Int32, path: String, asNote: Bool, database: RecordDatabase) throws(CLIError) -> StoredBytes {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw CLIError.system("fstat", path, errno: errno) }
        let size = Int64(st.st_size)
        if asNote, size <= Int64(Note.maxInlineTextBytes) {
            // One byte more than fstat said: a file that grew since is stored as it is now.
            let bytes = try readPrefix(fd, limit: Int(size) + 1, path: path)
            if bytes.count == Int(size), let text = Note.inlineText(bytes) { return .text(text) }
            if bytes.count != Int(size) {
                // Changed while read: store what is there now, losslessly, streamed.
                return try asset(fd, size: try currentSize(fd, path: path), path: path, database: database)
            }
        }
        return try asset(fd, size: size, path: path, database: database)
    }

    private static func asset(_ fd: Int32, size: Int64, path: String, database: RecordDatabase) throws(CLIError) -> StoredBytes {
        do { return .asset(try database.makeAsset(readingFrom: fd, size: size)) } catch { throw CLIError.store(error, subject: path) }
    }

    private static func currentSize(_ fd: Int32, path: String) throws(CLIError) -> Int64 {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw CLIError.system("fstat", path, errno: errno) }
        return Int64(st.st_size)
    }

    /// Up to `limit` bytes from the start of `fd`.
    private static func readPrefix(_ fd: Int32, limit: Int, path: String) throws(CLIError) -> [UInt8] {
        try FileSystem.io { () throws(SystemCallError) in try Syscall.read(fd, count: limit, at: 0, path: path) }
    }

    // MARK: Writing the bytes out

    /// Writes these bytes to `fd` from its current offset: the text, or the asset streamed in 1 MiB
    /// chunks. Into a regular file the asset's holes stay holes (only its data extents are written,
    /// found with `lseek(SEEK_DATA/SEEK_HOLE)`, then the file is extended to the size); into a pipe or
    /// terminal they are written as zeros.
    /// - Throws: an I/O ``CLIError`` naming `destination`, or the asset's.
    func write(to fd: Int32, destination: String, database: RecordDatabase) throws(CLIError) {
        switch self {
        case .text(let text):
            let bytes = Array(text.utf8)
            let result = bytes.withUnsafeBytes { buffer in
                Result { () throws(CLIError) in try Self.writeAll(fd, buffer, at: nil, path: destination) }
            }
            try result.get()
        case .asset(let asset):
            try Self.copyAsset(asset, to: fd, destination: destination, database: database)
        }
    }

    private static func copyAsset(_ asset: Asset, to out: Int32, destination: String, database: RecordDatabase) throws(CLIError) {
        let source = database.assetPath(asset)
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            if errno == ENOENT { throw CLIError(.damaged, source, "asset file is missing") }
            throw CLIError.system("open", source, errno: errno)
        }
        defer { close(input) }
        var st = stat()
        guard fstat(input, &st) == 0 else { throw CLIError.system("fstat", source, errno: errno) }
        // A short asset's missing tail would read as a hole: refuse it instead of padding with zeros.
        guard Int64(st.st_size) >= asset.size else {
            throw CLIError(.damaged, source, "asset file is shorter than its recorded size \(asset.size)")
        }
        guard fstat(out, &st) == 0 else { throw CLIError.system("fstat", destination, errno: errno) }
        // Holes are kept only in an empty regular file written from its start, not in append mode
        // (export, `note cat > file`): there `pwrite` puts each extent at its offset and the
        // rest reads as zeros.
        let sparse =
            st.st_mode & S_IFMT == S_IFREG && st.st_size == 0 && lseek(out, 0, SEEK_CUR) == 0 && fcntl(out, F_GETFL) & O_APPEND == 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        let size = asset.size
        var offset: Int64 = 0
        while offset < size {
            let (dataStart, dataEnd) = Syscall.dataExtent(input, from: offset, size: size)
            if dataStart > offset, !sparse {
                buffer.initializeMemory(as: UInt8.self, repeating: 0)
                while offset < dataStart {
                    let count = Int(min(Int64(chunkSize), dataStart - offset))
                    try writeAll(out, UnsafeRawBufferPointer(rebasing: buffer[0..<count]), at: nil, path: destination)
                    offset += Int64(count)
                }
            }
            offset = dataStart
            while offset < dataEnd {
                let want = Int(min(Int64(chunkSize), dataEnd - offset))
                let n = try FileSystem.io { () throws(SystemCallError) in
                    try Syscall.readAll(input, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: offset, path: source)
                }
                if n == 0 { throw CLIError(.damaged, source, "asset file is shorter than its recorded size \(size)") }
                try writeAll(out, UnsafeRawBufferPointer(rebasing: buffer[0..<n]), at: sparse ? offset : nil, path: destination)
                offset += Int64(n)
            }
        }
        if sparse {
            guard ftruncate(out, off_t(size)) == 0 else { throw CLIError.system("ftruncate", destination, errno: errno) }
            guard lseek(out, off_t(size), SEEK_SET) >= 0 else { throw CLIError.system("lseek", destination, errno: errno) }
        }
    }

    /// `write(2)` or, with an offset, `pwrite(2)` of all of `bytes`.
    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64?, path: String) throws(CLIError) {
        try FileSystem.io { () throws(SystemCallError) in try Syscall.writeAll(fd, bytes, at: offset, path: path) }
    }
}

import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Reads many record files in parallel, each into a buffer its worker reuses: the raw bytes a
/// query scans (and decodes only when they may match), with memory bounded by the workers'
/// buffers, not by the number of files.
///
/// A file is opened relative to `records/` (`openat`: a short path walk) and read with as few
/// system calls as the file allows (`openat`, `read`, `close`; no `fstat`). Anything unusual
/// (a missing file, an error, a file over ``DatabaseLayout/recordFileLimit``) is handed on as
/// nil, so that the caller reads that record again through ``RecordFiles/read(_:layout:)``,
/// which reports it exactly.
enum RecordFileBatch {
    /// Calls `body(i, bytes)` for every `ids[i]`, on several threads at once; `bytes` is valid only
    /// during the call, nil when the file could not be read here.
    static func forEach(
        _ ids: [RecordID], layout: DatabaseLayout, _ body: @Sendable (Int, UnsafeRawBufferPointer?) -> Void
    ) {
        guard !ids.isEmpty else { return }
        let directory = Glibc.open(layout.records, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if directory >= 0 { Glibc.close(directory) } }
        let workers = max(1, min(ids.count / 16, ProcessInfo.processInfo.activeProcessorCount * 4))
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var buffer = Buffer()
            for i in stride(from: worker, to: ids.count, by: workers) {
                let count = read(ids[i], relativeTo: directory, layout: layout, into: &buffer)
                if let count {
                    buffer.storage.withUnsafeBytes { body(i, UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                } else {
                    body(i, nil)
                }
                buffer.shrinkAfterLargeFile()
            }
        }
    }

    /// A worker's read buffer: grows for a large file, drops back after it.
    struct Buffer {
        static let initialSize = 64 << 10
        var storage = [UInt8](repeating: 0, count: initialSize)

        mutating func shrinkAfterLargeFile() {
            if storage.count > 4 * Self.initialSize { storage = [UInt8](repeating: 0, count: Self.initialSize) }
        }
    }

    /// Reads one record file into `buffer`; the byte count, or nil when it could not be read whole
    /// within the limit.
    private static func read(_ id: RecordID, relativeTo directory: Int32, layout: DatabaseLayout, into buffer: inout Buffer) -> Int? {
        let relative = RecordFileName.relativePath(for: id.recordName)
        let prefix = "records/"
        let fd: Int32
        if directory >= 0, relative.hasPrefix(prefix) {
            fd = Sys.retrying { openat(directory, String(relative.dropFirst(prefix.count)), O_RDONLY | O_CLOEXEC) }
        } else {
            fd = Sys.retrying { Glibc.open(layout.root + "/" + relative, O_RDONLY | O_CLOEXEC) }
        }
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var done = 0
        while true {
            if done == buffer.storage.count {
                // One byte past the limit is enough to know the file is over it.
                guard buffer.storage.count <= DatabaseLayout.recordFileLimit else { return nil }
                buffer.storage += [UInt8](
                    repeating: 0, count: min(buffer.storage.count, DatabaseLayout.recordFileLimit + 1 - buffer.storage.count))
            }
            let room = buffer.storage.count - done
            let n = buffer.storage.withUnsafeMutableBytes { raw in
                Sys.retrying { Glibc.read(fd, raw.baseAddress! + done, room) }
            }
            if n < 0 { return nil }
            done += n
            // A short read of a regular file is its end (a file being rewritten meanwhile is caught
            // by the caller as a damaged or changed record, as with any read).
            if n < room { break }
        }
        return done > DatabaseLayout.recordFileLimit ? nil : done
    }
}

import Foundation
import POSIX

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Reads many record files in parallel, each into a buffer its worker reuses: the raw bytes a
/// query scans (and decodes only when they may match), with memory bounded by the workers'
/// buffers, not by the number of files.
///
/// A file is opened relative to `records/` (`openat`: a short path walk), or for a large batch
/// relative to its shard directory, all 256 of them opened once (a path walk of one name), and
/// read with as few system calls as the file allows (`openat`, `read`, `close`; no `fstat`).
/// Anything unusual (a missing file, an error, a file over ``DatabaseLayout/recordFileLimit``) is
/// handed on as nil, so that the caller reads that record again through
/// ``RecordFiles/read(_:layout:)``, which reports it exactly.
enum RecordFileBatch {
    /// From this many files on, the batch opens the shard directories (256 opens, a few hundred
    /// microseconds) to save a path component on every file.
    static let shardDirectoriesFrom = 4096

    /// Calls `body(i, bytes)` for every `ids[i]`, on several threads at once; `bytes` is valid only
    /// during the call, nil when the file could not be read here. `shardDirectoriesFrom` is for tests.
    static func forEach(
        _ ids: [RecordID], layout: DatabaseLayout, shardDirectoriesFrom: Int = Self.shardDirectoriesFrom,
        _ body: @Sendable (Int, UnsafeRawBufferPointer?) -> Void
    ) {
        guard !ids.isEmpty else { return }
        let directories = Directories(layout, shards: ids.count >= shardDirectoriesFrom)
        defer { directories.close() }
        let workers = max(1, min(ids.count / 16, ProcessInfo.processInfo.activeProcessorCount * 4))
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var buffer = Buffer()
            for i in stride(from: worker, to: ids.count, by: workers) {
                let count = read(ids[i], in: directories, layout: layout, into: &buffer)
                if let count {
                    buffer.storage.withUnsafeBytes { body(i, UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                } else {
                    body(i, nil)
                }
                buffer.shrinkAfterLargeFile()
            }
        }
    }

    /// The open descriptors of `records/` and, for a large batch, of its shard directories (-1
    /// for one that could not be opened: its files are then opened by path).
    struct Directories: Sendable {
        let records: Int32
        let shards: [Int32]

        init(_ layout: DatabaseLayout, shards: Bool) {
            let records = Glibc.open(layout.records, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            self.records = records
            self.shards =
                shards && records >= 0
                ? (0..<256).map { shard in
                    String(format: "%02x", shard).withCString { openat(records, $0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
                } : []
        }

        func close() {
            for fd in shards + [records] where fd >= 0 { Glibc.close(fd) }
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
    private static func read(_ id: RecordID, in directories: Directories, layout: DatabaseLayout, into buffer: inout Buffer) -> Int? {
        let name = id.recordName
        let shard = directories.shards.isEmpty ? -1 : directories.shards[Int(RecordFileName.shard(of: name))]
        let opened =
            shard >= 0
            ? RecordFileName.withFilePath(for: name, inShard: true) { path in
                Syscall.retrying { openat(shard, path, O_RDONLY | O_CLOEXEC) }
            }
            : directories.records >= 0
                ? RecordFileName.withFilePath(for: name, inShard: false) { path in
                    Syscall.retrying { openat(directories.records, path, O_RDONLY | O_CLOEXEC) }
                } : nil
        let fd = opened ?? Syscall.retrying { Glibc.open(layout.recordPath(name), O_RDONLY | O_CLOEXEC) }
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
                Syscall.retrying { Glibc.read(fd, raw.baseAddress! + done, room) }
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

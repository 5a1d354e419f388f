import Foundation
import POSIX
import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The index snapshot of versions before the metadata index, `index.jsonl`: a header line, then
/// one line of metadata per record. Read once, to build the index file (``MetadataIndexFile``),
/// then removed.
enum Snapshot {
    struct Header {
        var seq: UInt64
        var generation: UInt64
        var nextIdentity: UInt64
        var tombstoneHorizon: UInt64
    }

    /// Loads a snapshot; nil when there is none. A damaged snapshot throws.
    ///
    /// Read in blocks of whole lines (memory: the index plus two blocks); each block's lines are
    /// parsed in parallel chunks (one per core) in the background while this thread inserts the
    /// previous block's records into the index, in order (the inserts are the part that cannot be
    /// spread over cores: this way the parsing is hidden behind them).
    static func load(from path: String, blockSize: Int = loadBlock) throws(RecordStoreError) -> (RecordIndex, Header, bytes: Int)? {
        let fd = Syscall.retrying { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw Sys.fail("open", path)
        }
        defer { Sys.close(fd) }
        let size = try Sys.fileSize(fd, path: path).size
        func damaged(_ why: String) -> RecordStoreError { .damagedRecord(nil, path: path, reason: why) }
        var reader = LineBlockReader(
            fd: fd, path: path, from: 0, end: size, lineLimit: DatabaseLayout.snapshotLineLimit, blockSize: blockSize)
        var index = RecordIndex()
        var header: Header?
        // The block being parsed in the background; waited for on every way out.
        var parsing: BackgroundParse?
        defer { parsing?.wait() }
        while true {
            switch try reader.next() {
            case .end:
                if let previous = parsing?.take() { try insert(previous, into: &index) }
                parsing = nil
                guard let header else { throw damaged("truncated header") }
                guard reader.consumed == size else { throw damaged("truncated last line") }
                index.seq = header.seq
                index.nextIdentity = max(index.nextIdentity, header.nextIdentity)
                index.tombstoneHorizon = header.tombstoneHorizon
                return (index, header, size)
            case .tooLong(let at):
                throw damaged("line at byte \(at) is longer than \(DatabaseLayout.snapshotLineLimit) bytes")
            case .lines(let block):
                var bodyStart = 0
                if header == nil {
                    guard let newline = block.indexOfNewline(in: 0..<block.count) else { throw damaged("truncated header") }
                    header = try decodeHeader(block[0..<newline], into: &index, path: path)
                    bodyStart = newline + 1
                    index.reserveCapacity(Self.estimatedLineCount(block, from: bodyStart, fileSize: size))
                }
                let previous = parsing?.take()
                let (fileOffset, start) = (reader.consumed - block.count, bodyStart)
                parsing = BackgroundParse { parseLines(block, from: start, fileOffset: fileOffset, path: path) }
                if let previous { try insert(previous, into: &index) }
            }
        }
    }

    /// The blocks ``load(from:)`` reads: two of them (one parsed, one inserted) are in memory at once.
    static let loadBlock = 4 << 20

    /// One block's lines parsed on another thread (``parseLines(_:from:fileOffset:path:)``).
    private final class BackgroundParse: Sendable {
        private let worker: BackgroundWorker
        /// Set once by the background work, before its thread ends.
        private let result: ConditionLock<[Result<[RecordMetadata], RecordStoreError>]?>

        /// Starts `work` on a thread of its own: not on a Dispatch queue, whose threads (Swift
        /// concurrency's too) may all be blocked waiting, like the caller, which would then wait forever.
        init(_ work: @escaping @Sendable () -> [Result<[RecordMetadata], RecordStoreError>]) {
            let result = ConditionLock<[Result<[RecordMetadata], RecordStoreError>]?>(nil)
            self.result = result
            worker = BackgroundWorker.start(name: "notesfs.snapshot-parse") { _ in
                let parsed = work()
                result.withLock { $0 = parsed }
            }
        }

        /// Blocks until the work is done (any number of times).
        func wait() { worker.join() }

        /// The parsed chunks, in order, once the work is done: moved out (so that the caller holds
        /// the only copy), then none.
        func take() -> [Result<[RecordMetadata], RecordStoreError>] {
            wait()
            return result.withLock { taken in
                defer { taken = nil }
                return taken ?? []
            }
        }
    }

    /// How many lines a snapshot of `fileSize` bytes holds, judged by its first block: room
    /// reserved up front, so that the index's tables are not grown (and copied, old and new
    /// buffers both resident) three or four times over while a large snapshot loads. A hint only:
    /// a damaged file can claim any size, so it is capped at a line per 64 bytes and at 2^24.
    static func estimatedLineCount(_ block: Data, from start: Int, fileSize: Int) -> Int {
        var lines = 0
        var position = block.startIndex + start
        while position < block.endIndex, let newline = block.indexOfNewline(in: position..<block.endIndex) {
            lines += 1
            position = newline + 1
        }
        let sampled = position - (block.startIndex + start)
        guard lines > 0, sampled > 0 else { return 0 }
        let estimate = Double(fileSize) / (Double(sampled) / Double(lines)) * 1.02
        return Int(min(estimate, Double(min(fileSize / 64, 1 << 24))))
    }

    private static func decodeHeader(_ line: Data, into index: inout RecordIndex, path: String) throws(RecordStoreError) -> Header {
        func damaged(_ why: String) -> RecordStoreError { .damagedRecord(nil, path: path, reason: why) }
        do {
            let json = try JSON.parse(line)
            guard json["snapshot"]?.int64 == 1, let seq = json["seq"]?.uint64, let generation = json["generation"]?.uint64,
                let next = json["nextIdentity"]?.uint64, let horizon = json["tombstoneHorizon"]?.uint64
            else { throw damaged("bad header") }
            for item in json["tombstones"]?.array ?? [] {
                let metadata = try decodeLine(item)
                index.tombstones.append(Tombstone(seq: metadata.seq, recordID: metadata.recordID, recordType: metadata.recordType))
            }
            return Header(seq: seq, generation: generation, nextIdentity: next, tombstoneHorizon: horizon)
        } catch let error as RecordStoreError {
            throw error
        } catch {
            throw damaged("header: \(error)")
        }
    }

    /// Parses the lines of `data` from `start` (each ends in `\n`) in parallel chunks: each
    /// chunk's records in order, or why its first bad line is damaged.
    private static func parseLines(_ data: Data, from start: Int, fileOffset: Int, path: String) -> [Result<
        [RecordMetadata], RecordStoreError
    >] {
        let body = data[start...]
        guard !body.isEmpty else { return [] }
        let chunkCount = max(1, min(8, ProcessInfo.processInfo.activeProcessorCount * 2))
        var bounds: [Range<Int>] = []
        var chunkStart = body.startIndex
        for i in 1...chunkCount {
            var end = i == chunkCount ? body.endIndex : max(chunkStart, body.startIndex + body.count * i / chunkCount)
            if end > chunkStart, end < body.endIndex, body[end - 1] != 0x0A {
                end = (data.indexOfNewline(in: end..<body.endIndex) ?? body.endIndex - 1) + 1
            }
            bounds.append(chunkStart..<end)
            chunkStart = end
        }
        let results = Mutex<[Int: Result<[RecordMetadata], RecordStoreError>]>([:])
        let chunkBounds = bounds
        DispatchQueue.concurrentPerform(iterations: chunkBounds.count) { i in
            let bounds = chunkBounds
            var parsed: [RecordMetadata] = []
            var lineStart = bounds[i].lowerBound
            var outcome: Result<[RecordMetadata], RecordStoreError>
            do {
                // Every line of the block ends in a newline (LineBlockReader); the fallback is for safety.
                while lineStart < bounds[i].upperBound {
                    let lineEnd = data.indexOfNewline(in: lineStart..<bounds[i].upperBound) ?? bounds[i].upperBound
                    parsed.append(try RecordCoding.decodeMetadata(data[lineStart..<lineEnd]))
                    lineStart = lineEnd + 1
                }
                outcome = .success(parsed)
            } catch {
                outcome = .failure(.damagedRecord(nil, path: path, reason: "line at byte \(fileOffset + lineStart): \(error)"))
            }
            results.withLock { $0[i] = outcome }
        }
        let chunks = results.withLock { $0 }
        return (0..<bounds.count).compactMap { chunks[$0] }
    }

    /// Inserts parsed chunks into the index in order; throws the first chunk's damage.
    private static func insert(_ chunks: consuming [Result<[RecordMetadata], RecordStoreError>], into index: inout RecordIndex)
        throws(RecordStoreError)
    {
        var chunks = chunks
        for i in chunks.indices {
            // Each record moved out of its chunk into the index, not copied and then released with
            // the chunk (a retain and a release of each of its strings and arrays, a million times).
            var records = try chunks[i].get()
            chunks[i] = .success([])
            records.reverse()
            while let metadata = records.popLast() { index.insert(metadata) }
        }
    }

    private static func decodeLine(_ json: JSON) throws(RecordDecodingError) -> RecordMetadata {
        let record = try RecordCoding.decode(json)
        let extras = try RecordCoding.decodeIndexExtras(json)
        return RecordMetadata(record: record, sizes: extras.sizes, seq: extras.seq)
    }
}

extension RecordIndex {
    /// Makes room for `count` records in the tables that hold one entry a record.
    mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
        names.reserveCapacity(count)
    }

    /// Adds a record's metadata as loaded (from a snapshot or a record file).
    mutating func insert(_ metadata: consuming RecordMetadata) {
        let name = metadata.recordID.recordName
        // Each reference is added to its target's referrers, found (or made) with one lookup, and
        // then names its target with the string that keys those referrers.
        metadata.shareReferenceNames { key, target in
            var found = referrers.index(forKey: target)
            if found == nil {
                referrers[target] = [:]
                found = referrers.index(forKey: target)
            }
            guard let slot = found else { return target }  // just added: always found
            referrers.values[slot][key, default: []].insert(name)
            return referrers.keys[slot]
        }
        if let identity = metadata.storedIdentity {
            names[identity] = name
            // Saturating: an identity from disk may be UInt64.max (the next reservation then fails cleanly).
            if identity >= nextIdentity { nextIdentity = identity == .max ? .max : identity + 1 }
        }
        metadata.forEachAsset { asset in assetReferences[asset.sha256, default: 0] += 1 }
        if !fieldIndexes.isEmpty { addToFieldIndexes(metadata) }
        entries[name] = metadata  // its last use, so that it can be moved in rather than copied
    }
}

import Foundation
import POSIX

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// One committed modify, as one line of `journal.jsonl`: `{"seq":N,"deletes":[…],"saves":[record…]}`.
struct JournalEntry: Sendable {
    var seq: UInt64
    var saves: [Record]
    var deletes: [RecordID]
    /// Each saved record's JSON exactly as in the line, which for a full record is also the
    /// record file's content (one serializer writes both), so a commit encodes each record once
    /// and recovery can compare and rewrite files without encoding again. A partial record
    /// (metadata-only save) carries the `sizes` of the fields it leaves out and has no file write.
    var encodedSaves: [[UInt8]]? = nil
    /// Identities below this are taken (``RecordDatabase/reserveIdentity()`` hands them out).
    var reservedUpTo: UInt64? = nil
    /// The byte offset of its line in the journal it was read from or appended to (not stored).
    var lineOffset: Int? = nil

    /// Encodes every saved record once (``encodedSaves``), for the journal line and the record files.
    mutating func encodeSaves() {
        if encodedSaves == nil { encodedSaves = saves.map(RecordCoding.encode) }
    }

    /// Refuses an entry whose records or line the store could not read back: a record's JSON over
    /// ``DatabaseLayout/recordFileLimit``, the line over ``DatabaseLayout/journalLineLimit``.
    ///
    /// - Throws: ``RecordStoreError/recordTooLarge(_:size:limit:)``.
    func checkSizes() throws(RecordStoreError) {
        guard let encodedSaves else { return }
        var total = 0
        for (record, encoded) in zip(saves, encodedSaves) {
            guard encoded.count <= DatabaseLayout.recordFileLimit else {
                throw .recordTooLarge(record.recordID, size: encoded.count, limit: DatabaseLayout.recordFileLimit)
            }
            total += encoded.count
        }
        // Deletes and the line's frame: a record name is at most a few KiB once escaped.
        let overhead = 512 + deletes.reduce(0) { $0 + $1.recordName.utf8.count * 6 + 3 }
        if total + overhead > DatabaseLayout.journalLineLimit, let first = saves.first {
            throw .recordTooLarge(first.recordID, size: total + overhead, limit: DatabaseLayout.journalLineLimit)
        }
    }

    func encodedLine() -> [UInt8] {
        var w = JSONWriter(capacity: 512 + (encodedSaves?.reduce(0) { $0 + $1.count } ?? 0))
        var first = true
        w.raw("{")
        w.key("seq", first: &first)
        w.number(seq)
        w.key("deletes", first: &first)
        w.raw("[")
        for (i, id) in deletes.enumerated() {
            if i > 0 { w.raw(",") }
            w.string(id.recordName)
        }
        w.raw("]")
        w.key("saves", first: &first)
        w.raw("[")
        for (i, record) in saves.enumerated() {
            if i > 0 { w.raw(",") }
            if let encoded = encodedSaves?[i] { w.raw(encoded) } else { RecordCoding.write(record, seq: nil, into: &w) }
        }
        w.raw("]")
        if let reservedUpTo {
            w.key("reserve", first: &first)
            w.number(reservedUpTo)
        }
        w.raw("}\n")
        return w.bytes
    }

    static func decode(_ line: Data) throws(RecordDecodingError) -> JournalEntry {
        do {
            return try line.withJSONCursor { (c) throws(JSONSyntaxError) -> JournalEntry in
                var seq: UInt64?
                var deletes: [RecordID] = []
                var saves: [Record] = []
                var encoded: [[UInt8]] = []
                var reserved: UInt64?
                try c.readObject { (c, key) throws(JSONSyntaxError) in
                    switch key {
                    case "seq": seq = try c.readUInt64()
                    case "deletes":
                        try c.readArray { (c) throws(JSONSyntaxError) in deletes.append(RecordID(recordName: try c.readString())) }
                    case "saves":
                        try c.readArray { (c) throws(JSONSyntaxError) in
                            c.skipWhitespace()
                            let start = c.index
                            let decoded = try RecordCoding.decode(&c)
                            var record = decoded.record
                            record.omitted = decoded.sizes
                            saves.append(record)
                            encoded.append(Array(UnsafeBufferPointer(rebasing: c.bytes[start..<c.index])))
                        }
                    case "reserve": reserved = try c.readUInt64()
                    default: try c.skipValue()
                    }
                }
                try c.expectEnd()
                guard let seq else { throw c.error("not a journal entry") }
                return JournalEntry(seq: seq, saves: saves, deletes: deletes, encodedSaves: encoded, reservedUpTo: reserved)
            }
        } catch {
            throw RecordDecodingError(error.description)
        }
    }
}

/// The write-ahead log: `journal.jsonl`, a header line then one line per commit, appended under the lock.
///
/// A line is complete when it ends in `\n`; a torn last line (a writer killed mid-write) is ignored
/// by readers and cut off by the next committer. A checkpoint replaces the file (new generation)
/// after writing the index snapshot; readers holding the old file finish it, then follow the new one.
struct JournalFile {
    let path: String
    private(set) var fd: Int32
    private(set) var inode: UInt64
    private(set) var generation: UInt64
    private(set) var baseSeq: UInt64
    /// Bytes consumed: the end of the last complete line read.
    private(set) var offset: Int
    /// Bytes after the last complete line at the last read (a torn or in-progress line).
    private(set) var trailingBytes = 0

    /// Creates a fresh journal durably (temp + fsync + rename + directory fsync).
    static func create(path: String, temp: String, generation: UInt64, baseSeq: UInt64) throws(RecordStoreError) {
        try Sys.writeFileAtomically(path, header(generation: generation, baseSeq: baseSeq), temp: temp, durable: true)
    }

    private static func header(generation: UInt64, baseSeq: UInt64) -> [UInt8] {
        Array("{\"journal\":1,\"generation\":\(generation),\"baseSeq\":\(baseSeq)}\n".utf8)
    }

    /// Replaces the journal at `path` durably (as ``create(path:temp:generation:baseSeq:)``) by a
    /// new generation that carries over `old`'s complete lines from byte `carriedFrom` on (the
    /// commits after `baseSeq`, made while a background checkpoint wrote its snapshot), copied a
    /// block at a time. Call with the commit lock held, `old` read to its end. Returns the new
    /// journal, its lines read (the caller has applied them).
    static func replace(
        _ old: JournalFile, carryingFrom carriedFrom: Int, temp: String, generation: UInt64, baseSeq: UInt64
    ) throws(RecordStoreError) -> JournalFile {
        guard carriedFrom <= old.offset else { throw .invalidArguments("journal lines to carry start past its end") }
        let header = header(generation: generation, baseSeq: baseSeq)
        try Sys.writeFileAtomically(old.path, temp: temp, durable: true) { (out) throws(RecordStoreError) in
            try Sys.writeAll(out, header, path: temp)
            try old.copy(carriedFrom..<old.offset, to: out, path: temp)
        }
        var next = try JournalFile(path: old.path)
        next.offset = header.count + old.offset - carriedFrom
        return next
    }

    /// Opens the journal (read-only unless `writable`) and reads its header.
    init(path: String, writable: Bool = true) throws(RecordStoreError) {
        self.path = path
        fd = try Sys.open(path, writable ? O_RDWR | O_APPEND : O_RDONLY)
        do throws(RecordStoreError) {
            let info = try Sys.fileSize(fd, path: path)
            inode = info.inode
            let head = try Sys.pread(fd, count: min(info.size, 4096), offset: 0, path: path)
            guard let newline = head.firstIndex(of: 0x0A),
                let json = try? JSON.parse(Data(head[..<newline])),
                json["journal"]?.int64 == 1,
                let generation = json["generation"]?.uint64, let baseSeq = json["baseSeq"]?.uint64
            else { throw RecordStoreError.damagedRecord(nil, path: path, reason: "journal header is damaged") }
            self.generation = generation
            self.baseSeq = baseSeq
            offset = newline + 1
        } catch {
            Sys.close(fd)
            throw error
        }
    }

    func close() { Sys.close(fd) }

    /// Whether the file at `path` is no longer the one this handle reads (a checkpoint replaced it).
    func isReplaced() throws(RecordStoreError) -> Bool {
        guard let st = try Sys.fileStatus(path) else { return true }
        return UInt64(st.st_ino) != inode
    }

    /// Whether there are bytes past what was read.
    func hasNewBytes() throws(RecordStoreError) -> Bool {
        try Sys.fileSize(fd, path: path).size > offset + trailingBytes
    }

    /// Reads the complete lines past ``offset``, handing each entry to `body` as it is decoded
    /// (so that only one entry's records are in memory at a time), and each complete line that
    /// does not decode to `damaged` (then reads on: the lines after it are commits too). Stops at
    /// a line over ``DatabaseLayout/journalLineLimit`` and returns what is wrong with it.
    mutating func readEntries(
        _ body: (JournalEntry) throws(RecordStoreError) -> Void,
        damaged: (DamagedJournalLine) throws(RecordStoreError) -> Void = { _ in }
    ) throws(RecordStoreError) -> String? {
        let size = try Sys.fileSize(fd, path: path).size
        guard size > offset else {
            trailingBytes = 0
            return nil
        }
        // Streamed: at most one block and one line (≤ journalLineLimit) in memory.
        var reader = LineBlockReader(fd: fd, path: path, from: offset, end: size, lineLimit: DatabaseLayout.journalLineLimit)
        var damage: String?
        reading: while true {
            switch try reader.next() {
            case .end:
                break reading
            case .tooLong(let at):
                damage = "journal line at byte \(at) is longer than \(DatabaseLayout.journalLineLimit) bytes"
                break reading
            case .lines(let block):
                var lineStart = 0
                while let newline = block.indexOfNewline(in: lineStart..<block.count) {
                    let line = block[lineStart..<newline]
                    switch Result(catching: { () throws(RecordDecodingError) in try JournalEntry.decode(line) }) {
                    case .success(var entry):
                        entry.lineOffset = offset
                        try body(entry)
                    case .failure(let error):
                        try damaged(DamagedJournalLine(offset: offset, bytes: Data(line), reason: error.description))
                    }
                    offset += newline + 1 - lineStart
                    lineStart = newline + 1
                }
            }
        }
        trailingBytes = size - offset
        return damage
    }

    /// Moves the whole journal file into `lostAndFound` (keeping every byte) and puts in its place a
    /// copy of the lines before ``offset`` (streamed), then reads on from the copy. Call with the
    /// commit lock held, after ``readEntries(_:)`` stopped at a damaged line. Returns where the file went.
    mutating func setAsideTail(_ lostAndFound: LostAndFound) throws(RecordStoreError) -> String {
        let temp = RecordFiles.tempPath(lostAndFound.layout)
        let out = try Sys.open(temp, O_WRONLY | O_CREAT | O_EXCL)
        do throws(RecordStoreError) {
            try copy(0..<offset, to: out, path: temp)
            try Sys.fsync(out, path: temp)
            Sys.close(out)
        } catch {
            Sys.close(out)
            try? Sys.unlink(temp)
            throw error
        }
        let moved = try lostAndFound.moveAside(path)
        try Sys.rename(temp, path)
        try Sys.fsyncPath((path as NSString).deletingLastPathComponent, directory: true)
        let next = try Sys.open(path, O_RDWR | O_APPEND)
        Sys.close(fd)
        fd = next
        inode = try Sys.fileSize(fd, path: path).inode
        trailingBytes = 0
        return moved
    }

    /// Writes the bytes of `range` of this file to `out` (the file at `path`), a block at a time.
    private func copy(_ range: Range<Int>, to out: Int32, path outPath: String) throws(RecordStoreError) {
        var copied = range.lowerBound
        while copied < range.upperBound {
            let bytes = try Sys.pread(fd, count: min(1 << 20, range.upperBound - copied), offset: copied, path: path)
            if bytes.isEmpty { throw RecordStoreError.io(path: path, operation: "read (file shrank)", errno: EIO) }
            try Sys.writeAll(out, bytes, path: outPath)
            copied += bytes.count
        }
    }

    /// Replaces the journal at ``path`` durably by a copy of its complete lines (header included)
    /// in which each line of `replacements`, by its offset and length, is `with` instead (a
    /// damaged line by the line that stands for it), then reads on from the copy's end. Call with
    /// the commit lock held, after ``readEntries(_:damaged:)`` read to the end.
    mutating func replaceLines(_ replacements: [(line: Range<Int>, with: [UInt8])], temp: String) throws(RecordStoreError) {
        var size = 0
        try Sys.writeFileAtomically(path, temp: temp, durable: true) { (out) throws(RecordStoreError) in
            var copied = 0
            for (line, bytes) in replacements.sorted(by: { $0.line.lowerBound < $1.line.lowerBound }) where line.lowerBound >= copied {
                try copy(copied..<line.lowerBound, to: out, path: temp)
                try Sys.writeAll(out, bytes, path: temp)
                size += line.lowerBound - copied + bytes.count
                copied = line.upperBound
            }
            try copy(copied..<offset, to: out, path: temp)
            size += offset - copied
        }
        let next = try Sys.open(path, O_RDWR | O_APPEND)
        Sys.close(fd)
        fd = next
        inode = try Sys.fileSize(fd, path: path).inode
        offset = size
        trailingBytes = 0
    }

    /// The entry of the complete line at byte `offset` (one ``lineOffset`` named).
    ///
    /// - Throws: ``RecordStoreError/damagedRecord(_:path:reason:)`` when no entry starts there.
    func entry(at offset: Int) throws(RecordStoreError) -> JournalEntry {
        func damaged(_ why: String) -> RecordStoreError { .damagedRecord(nil, path: path, reason: "line at byte \(offset): \(why)") }
        var reader = LineBlockReader(
            fd: fd, path: path, from: offset, end: try Sys.fileSize(fd, path: path).size, lineLimit: DatabaseLayout.journalLineLimit)
        guard case .lines(let block) = try reader.next(), let newline = block.indexOfNewline(in: 0..<block.count) else {
            throw damaged("no complete line")
        }
        do { return try JournalEntry.decode(block[0..<newline]) } catch { throw damaged(error.description) }
    }

    /// Cuts off everything after the last complete line (call with the commit lock held).
    mutating func truncateTail() throws(RecordStoreError) {
        guard trailingBytes > 0 else { return }
        try Sys.ftruncate(fd, offset, path: path)
        trailingBytes = 0
    }

    /// Appends one complete line (call with the commit lock held, after reading every line).
    mutating func append(_ line: [UInt8]) throws(RecordStoreError) {
        guard line.last == 0x0A else { throw .invalidArguments("journal line without its newline") }
        do {
            try Sys.writeAll(fd, line, path: path)
        } catch {
            // Leave no partial line behind.
            try? Sys.ftruncate(fd, offset, path: path)
            throw error
        }
        offset += line.count
    }

    var size: Int { offset }

    func sync() throws(RecordStoreError) {
        if Syscall.retrying({ fdatasync(fd) }) < 0 { throw Sys.fail("fdatasync", path) }
    }
}

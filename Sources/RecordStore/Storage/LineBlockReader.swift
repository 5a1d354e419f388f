import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Reads a file from an offset as blocks of whole lines, so that memory never holds more than one
/// block plus one line however large the file is: the journal and `index.jsonl` are read with it.
struct LineBlockReader {
    enum Next {
        /// One or more complete lines, the last ending in `\n`.
        case lines(Data)
        /// No newline within the line limit from file offset `at`: the rest is not read.
        case tooLong(at: Int)
        /// Nothing more (the bytes after the last newline, if any, are a torn line).
        case end
    }

    let fd: Int32
    let path: String
    /// The file size to read up to.
    let end: Int
    let lineLimit: Int
    let blockSize: Int
    /// File offset just past the last block returned: where the line being read starts.
    private(set) var consumed: Int
    /// The bytes from ``consumed`` to ``position`` while they are at most one block; nil when the
    /// pending line grew longer (it is read again from the file once its end is found, so that a
    /// line over the limit never costs more than one block of memory).
    private var carry: [UInt8]? = []
    /// The next file offset to read.
    private var position: Int

    init(fd: Int32, path: String, from offset: Int, end: Int, lineLimit: Int, blockSize: Int = 1 << 20) {
        self.fd = fd
        self.path = path
        self.end = end
        self.lineLimit = lineLimit
        self.blockSize = blockSize
        consumed = offset
        position = offset
    }

    mutating func next() throws(RecordStoreError) -> Next {
        while position < end {
            // The pending bytes, then this read, in the one buffer the block is handed out in: no
            // copy of the read and no buffer grown while the two are joined (a 1,000,000-record
            // snapshot is 85 blocks of 4 MiB, and each fresh page costs a fault).
            let pending = carry?.count ?? 0
            var buffer = Data(count: pending + min(blockSize, end - position))
            let (fd, path, offset, carried) = (fd, path, position, carry)
            let read = try buffer.withUnsafeMutableBytes { (raw) -> Result<Int, RecordStoreError> in
                if let carried { carried.withUnsafeBytes { raw.copyMemory(from: $0) } }
                let rest = UnsafeMutableRawBufferPointer(rebasing: raw[pending...])
                return Result { () throws(RecordStoreError) in try Sys.pread(fd, into: rest, offset: offset, path: path) }
            }.get()
            if read == 0 { return .end }
            let filled = pending + read
            guard let lastNewline = Self.lastNewline(in: buffer, pending..<filled) else {
                position += read
                carry = carry != nil && filled <= blockSize ? Array(buffer[0..<filled]) : nil
                if position - consumed > lineLimit { return .tooLong(at: consumed) }
                continue
            }
            let blockEnd = position + (lastNewline - pending) + 1
            let block: Data
            if carry != nil {
                // A slice of the buffer, from index 0.
                block = buffer[0...lastNewline]
            } else {
                // The first line is longer than a block: its length is known now, check it before reading it.
                if let first = buffer.indexOfNewline(in: 0..<filled), position + first - consumed > lineLimit {
                    return .tooLong(at: consumed)
                }
                block = Data(try Sys.pread(fd, count: blockEnd - consumed, offset: consumed, path: path))
                guard block.count == blockEnd - consumed else { return .end }
            }
            // Only the first line can be over the limit: later ones are within one read (blockSize ≤ lineLimit).
            if block.count > lineLimit, let first = block.indexOfNewline(in: 0..<block.count), first > lineLimit {
                return .tooLong(at: consumed)
            }
            carry = Array(buffer[(lastNewline + 1)..<filled])
            position += read
            consumed = blockEnd
            return .lines(block)
        }
        return .end
    }

    /// The index of the last newline of `data` within `range`, searched from its end (a block's
    /// last line is short next to the block).
    private static func lastNewline(in data: Data, _ range: Range<Int>) -> Int? {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Int? in
            var i = range.upperBound
            while i > range.lowerBound {
                i -= 1
                if raw[i] == 0x0A { return i }
            }
            return nil
        }
    }
}

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
            let bytes = try Sys.pread(fd, count: min(blockSize, end - position), offset: position, path: path)
            if bytes.isEmpty { return .end }
            guard let lastNewline = bytes.lastIndex(of: 0x0A) else {
                position += bytes.count
                if var pending = carry, pending.count + bytes.count <= blockSize {
                    pending.append(contentsOf: bytes)
                    carry = pending
                } else {
                    carry = nil
                }
                if position - consumed > lineLimit { return .tooLong(at: consumed) }
                continue
            }
            let blockEnd = position + lastNewline + 1
            let block: Data
            if let pending = carry {
                var joined = Data(pending)
                joined.append(contentsOf: bytes[...lastNewline])
                block = joined
            } else {
                // The first line is longer than a block: its length is known now, check it before reading it.
                if let first = bytes.firstIndex(of: 0x0A), position + first - consumed > lineLimit { return .tooLong(at: consumed) }
                block = Data(try Sys.pread(fd, count: blockEnd - consumed, offset: consumed, path: path))
                guard block.count == blockEnd - consumed else { return .end }
            }
            // Only the first line can be over the limit: later ones are within one read (blockSize ≤ lineLimit).
            if block.count > lineLimit, let first = block.indexOfNewline(in: 0..<block.count), first > lineLimit {
                return .tooLong(at: consumed)
            }
            carry = Array(bytes[(lastNewline + 1)...])
            position += bytes.count
            consumed = blockEnd
            return .lines(block)
        }
        return .end
    }
}

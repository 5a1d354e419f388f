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
    /// File offset just past the last block returned.
    private(set) var consumed: Int
    /// Bytes read after the last newline returned (a line not complete yet); at most `lineLimit`.
    private var carry: [UInt8] = []
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
            position += bytes.count
            guard let lastNewline = bytes.lastIndex(of: 0x0A) else {
                carry.append(contentsOf: bytes)
                if carry.count > lineLimit { return .tooLong(at: consumed) }
                continue
            }
            var block = Data(carry)
            block.append(contentsOf: bytes[...lastNewline])
            carry = Array(bytes[(lastNewline + 1)...])
            // Only the first line can be over the limit: later ones are within one read (blockSize ≤ lineLimit).
            if block.count > lineLimit, let first = block.indexOfNewline(in: 0..<block.count), first > lineLimit {
                return .tooLong(at: consumed)
            }
            consumed += block.count
            return .lines(block)
        }
        return .end
    }
}

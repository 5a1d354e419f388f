import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

extension RecordDatabase {
    /// The token of the database at `path` as its files say now, read without opening it: the
    /// database ID from `notesfs.json` and the sequence of the journal's last complete line (or its
    /// header's base when it has none). A derived index whose token equals it holds every commit.
    ///
    /// Nil when the files cannot tell (missing, damaged, a last line over 16 MiB): open the
    /// database then. Reads at most a few windows from the journal's end; never writes.
    public static func peekToken(path: String) -> ChangeToken? {
        let layout = DatabaseLayout(root: path)
        guard let data = try? Sys.readFile(layout.formatFile, limit: DatabaseLayout.formatFileLimit),
            let json = try? JSON.parse(data), let id = json["databaseID"]?.string
        else { return nil }
        let fd = Glibc.open(layout.journal, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        guard let seq = lastSequence(fd, size: Int(info.st_size), path: layout.journal) else { return nil }
        return ChangeToken(databaseID: id, seq: seq)
    }

    /// The journal's identity, length and modification time now (`DEV:INODE:SIZE:MTIME`), or nil
    /// when it cannot be read. The journal only grows, and is only ever replaced by a rename (a new
    /// file, written at another instant even where an inode number comes back): a derived index
    /// that stored this stamp (read before it caught up) and finds it unchanged holds every commit.
    public static func journalStamp(path: String) -> String? {
        var info = stat()
        guard stat(DatabaseLayout(root: path).journal, &info) == 0 else { return nil }
        return "\(info.st_dev):\(info.st_ino):\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }

    /// The `seq` of the last complete line of the journal open at `fd` (the header's `baseSeq` when
    /// there is no other line).
    private static func lastSequence(_ fd: Int32, size: Int, path: String) -> UInt64? {
        let linePrefix = Array("\n{\"seq\":".utf8)
        let headerKey = Array("\"baseSeq\":".utf8)
        // A torn last line (a commit being appended, or a crash) has no newline yet: skipped.
        let end = size
        var window = 64 << 10
        while window <= 16 << 20 {
            let start = max(0, end - window)
            guard let bytes = try? Sys.pread(fd, count: end - start, offset: start, path: path), bytes.count == end - start else {
                return nil
            }
            guard let lastNewline = bytes.lastIndex(of: UInt8(ascii: "\n")) else {
                window *= 4
                continue
            }
            // The last complete line ends at lastNewline; find where it starts.
            var i = lastNewline
            while i > 0, bytes[i - 1] != UInt8(ascii: "\n") { i -= 1 }
            if i == 0 && start > 0 {
                window *= 4  // the line starts before this window
                continue
            }
            let line = bytes[i..<lastNewline]
            if start + i == 0 {
                // The header is the only complete line.
                guard let range = line.firstRange(of: headerKey) else { return nil }
                return number(in: line[range.upperBound...])
            }
            guard bytes[(i - 1)...].starts(with: linePrefix) else { return nil }
            return number(in: line.dropFirst(linePrefix.count - 1))
        }
        return nil
    }

    private static func number(in bytes: ArraySlice<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        var digits = 0
        for byte in bytes {
            guard byte >= 0x30 && byte <= 0x39 else { break }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(UInt64(byte - 0x30))
            guard !o1, !o2 else { return nil }
            value = sum
            digits += 1
        }
        return digits > 0 ? value : nil
    }
}

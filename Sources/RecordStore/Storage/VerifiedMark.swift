import Foundation
import POSIX

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// How far into the journal every line's record files are known to be written, kept in the lock
/// file (which holds nothing else): `notesfs-verified BOOT GENERATION OFFSET`.
///
/// An open compares the record files of the journal's lines with the lines (a commit killed
/// between its journal line and its files, or power lost before the files reached the disk, left
/// them behind), a read of hundreds of files at every command. A commit that wrote its own files
/// moves the mark past its line when the mark stood at the line's start, and an open that checked
/// every line moves it to the journal's end; the next open checks only the lines after it. The
/// mark holds only while the machine has not restarted since (`BOOT`: the kernel's boot ID; until
/// then written files are in the page cache whatever happened to the process) and for the journal
/// generation it names.
struct VerifiedMark: Equatable {
    var boot: String
    var generation: UInt64
    var offset: Int

    /// This boot's ID (`/proc/sys/kernel/random/boot_id`); nil where there is none (then no mark holds).
    static let currentBoot: String? = {
        // A file of /proc has no size to read up to: read what one read gives.
        let fd = Glibc.open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let text = String(decoding: bytes[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.count == 36 ? text : nil
    }()

    /// The mark in `fd` (the lock file), if it is one of this boot.
    static func read(_ fd: Int32) -> VerifiedMark? {
        guard let boot = currentBoot, let bytes = try? Sys.pread(fd, count: 128, offset: 0, path: "lock") else { return nil }
        // Split on spaces and the line end by bytes: every commit reads the mark, and Foundation's
        // trimming and splitting were 60% of that read's samples.
        let fields = bytes.split(whereSeparator: { $0 == 0x20 || $0 == 0x0A }).map { String(decoding: $0, as: UTF8.self) }
        guard fields.count == 4, fields[0] == "notesfs-verified", fields[1] == boot,
            let generation = UInt64(fields[2]), let offset = Int(fields[3]), offset >= 0
        else { return nil }
        return VerifiedMark(boot: boot, generation: generation, offset: offset)
    }

    /// Writes the mark for `generation` at `offset` (best effort: a mark not written costs a check).
    static func write(_ fd: Int32, generation: UInt64, offset: Int) {
        guard let boot = currentBoot else { return }
        let line = Array("notesfs-verified \(boot) \(generation) \(offset)\n".utf8)
        // Padded to a fixed size, so that a shorter mark leaves no digit of a longer one behind.
        let padded = line + [UInt8](repeating: 0x20, count: max(0, 128 - line.count))
        _ = padded.withUnsafeBytes { Glibc.pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    /// Moves the mark from `start` to `end` of `generation`'s journal, when it stands at `start`.
    static func advance(_ fd: Int32, generation: UInt64, from start: Int, to end: Int) {
        guard let mark = read(fd), mark.generation == generation, mark.offset == start else { return }
        write(fd, generation: generation, offset: end)
    }
}

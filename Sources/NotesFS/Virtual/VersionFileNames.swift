import Foundation
import Glibc

/// How `.history` names a note's versions: by date, in UTC, to the second.
///
/// 1. `YYYY-MM-DDTHH-MM-SS` of the version's date (``Notes/Version/date``: when the state it keeps
///    was written), then the extension of the file (`.md` for a note; an attachment's own,
///    `photo.png` → `….png`; none when it has none).
/// 2. Versions sharing a second are numbered in the order given (oldest first), all of them, so
///    that `ls` sorts them as they were made (`-` sorts before `.`, so an unnumbered first one
///    would sort after its `-2`): `2026-12-03T08-00-00-1.md`, `2026-12-03T08-00-00-2.md`. The
///    first one's name gains its `-1` when a second version of its second is kept. The numbers
///    of one second are zero-padded to the same width (`-01` … `-12` past nine), so byte order
///    is still the order they were made.
/// 3. A date outside years 0000-9999 (a damaged record) shows as `0000-00-00T00-00-00`.
enum VersionFileNames {
    /// The names of versions with `dates`, in the order given.
    static func names(_ dates: [Date], fileExtension: String) -> [String] {
        let stamps = dates.map(stamp)
        var total: [String: Int] = [:]
        for stamp in stamps { total[stamp, default: 0] += 1 }
        var seen: [String: Int] = [:]
        return stamps.map { stamp in
            guard total[stamp, default: 0] > 1 else { return stamp + fileExtension }
            let number = seen[stamp, default: 0] + 1
            seen[stamp] = number
            let digits = String(number)
            let padding = String(repeating: "0", count: String(total[stamp, default: 0]).count - digits.count)
            return "\(stamp)-\(padding)\(digits)\(fileExtension)"
        }
    }

    /// `.md` for `Plan.md`, `.png` for `photo.png`, `.tar.gz` for `arch.tar.gz` (a compression
    /// suffix keeps the short extension before it: `.sql.zst`); `""` for `README` or `.profile`.
    static func fileExtension(of fileName: String) -> String {
        guard let dot = fileName.lastIndex(of: "."), dot != fileName.startIndex else { return "" }
        let suffix = String(fileName[dot...])
        guard suffix.count > 1, suffix.utf8.count <= 32 else { return "" }
        guard compressionSuffixes.contains(suffix.dropFirst().lowercased()),
            let inner = fileName[..<dot].lastIndex(of: "."), inner != fileName.startIndex
        else { return suffix }
        let part = fileName[fileName.index(after: inner)..<dot]
        guard (1...4).contains(part.count), part.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return suffix }
        return String(fileName[inner...])
    }

    /// Extensions of a compressor, which names its output by adding its own (`.tar` → `.tar.gz`).
    static let compressionSuffixes: Set<String> = ["gz", "bz2", "xz", "zst", "lz", "lz4", "lzma", "z", "br", "sz"]

    /// `YYYY-MM-DDTHH-MM-SS` of `date` in UTC.
    static func stamp(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970.rounded(.down)
        // Years 0000 through 9999: outside, the name would not keep its shape.
        guard interval.isFinite, interval >= -62_167_219_200, interval < 253_402_300_800 else { return "0000-00-00T00-00-00" }
        var seconds = time_t(interval)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return "0000-00-00T00-00-00" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = String(parts.tm_year + 1900)
        let paddedYear = String(repeating: "0", count: max(0, 4 - year.count)) + year
        return
            "\(paddedYear)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour))-\(two(parts.tm_min))-\(two(parts.tm_sec))"
    }
}

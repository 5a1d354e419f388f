import Foundation
import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

private let repairCounter = Atomic<UInt64>(0)

/// `<db>/lost+found/<time>-<pid>-<n>/`: where recovery and `fsck --repair` move files they cannot use,
/// under their path relative to the database (nothing is deleted).
struct LostAndFound {
    let layout: DatabaseLayout
    /// This repair's directory, `<db>/lost+found/<time>` (created on first use).
    let directory: String

    init(_ layout: DatabaseLayout) {
        self.layout = layout
        let stamp = Self.stamp(time(nil))
        // Unique per repair, so that two repairs in one second never move onto each other's files.
        directory = layout.lostAndFound + "/" + stamp + "-\(getpid())-\(repairCounter.add(1, ordering: .relaxed).newValue)"
    }

    /// `time` as `2026-12-06T03-25-40Z` (UTC, ISO 8601 with `-` for `:`), counted here: Foundation's
    /// date formatter loads time zones and an ICU calendar, and glibc's `gmtime_r` reads
    /// `/etc/localtime`, which every open (it makes a `LostAndFound` in case it needs one) would
    /// pay for. The date is Howard Hinnant's `civil_from_days`.
    static func stamp(_ time: Int) -> String {
        let days = time >= 0 ? time / 86_400 : (time - 86_399) / 86_400
        let second = time - days * 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(second / 3600))-\(two(second / 60 % 60))-\(two(second % 60))Z"
    }

    /// Moves the file at `path` (inside the database) to the same relative path here; returns where.
    @discardableResult
    func moveAside(_ path: String) throws(RecordStoreError) -> String {
        let relative =
            path.hasPrefix(layout.root + "/") ? String(path.dropFirst(layout.root.count + 1)) : (path as NSString).lastPathComponent
        let target = directory + "/" + relative
        try makeDirectories(for: target)
        try Sys.rename(path, target)
        // Private like the rest of the database, whatever mode the file had.
        _ = chmod(target, Sys.fileMode)
        return target
    }

    /// Writes `bytes` durably as the new file `name` here (a piece of a file that stays where it
    /// is, such as one damaged journal line); returns its path.
    func keep(_ bytes: Data, as name: String) throws(RecordStoreError) -> String {
        let target = directory + "/" + name
        try makeDirectories(for: target)
        let fd = try Sys.open(target, O_WRONLY | O_CREAT | O_EXCL)
        defer { Sys.close(fd) }
        try Sys.writeAll(fd, [UInt8](bytes), path: target)
        try Sys.fsync(fd, path: target)
        return target
    }

    /// Creates `target`'s parent directories under the database root, each 0700.
    private func makeDirectories(for target: String) throws(RecordStoreError) {
        var parents: [String] = []
        var dir = (target as NSString).deletingLastPathComponent
        while dir.count > layout.root.count, try Sys.fileStatus(dir) == nil {
            parents.append(dir)
            dir = (dir as NSString).deletingLastPathComponent
        }
        for parent in parents.reversed() { try Sys.mkdir(parent) }
    }
}

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
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "-")
        // Unique per repair, so that two repairs in one second never move onto each other's files.
        directory = layout.lostAndFound + "/" + stamp + "-\(getpid())-\(repairCounter.add(1, ordering: .relaxed).newValue)"
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

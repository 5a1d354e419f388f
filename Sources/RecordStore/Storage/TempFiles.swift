import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// `<db>/tmp/`, shared by every process that has the database open (the mount and the CLI, say).
///
/// Every temp file's name starts with the pid of its maker (``RecordFiles/tempPath(_:)``), so
/// that an opening process removes only what dead processes left: a live process's temp file or
/// asset pin stays. Files without a pid are removed once older than ``staleAge``.
enum TempFiles {
    /// Age after which a temp file is stale whoever made it (a pid may be reused).
    static let staleAge: TimeInterval = 24 * 3600
    /// Age after which a temp file without a pid in its name is removed.
    static let anonymousAge: TimeInterval = 300

    static func clearLeftovers(_ layout: DatabaseLayout) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: layout.temp) else { return }
        let now = Date().timeIntervalSince1970
        for name in names {
            let path = layout.temp + "/" + name
            guard let st = try? Sys.fileStatus(path) else { continue }
            let age = now - TimeInterval(st.st_mtim.tv_sec)
            let pid = name.split(separator: "-", maxSplits: 1).first.flatMap { Int32($0) }
            let stale: Bool
            if let pid, pid > 0 {
                stale = age > staleAge || (pid != getpid() && kill(pid, 0) < 0 && errno == ESRCH)
            } else {
                stale = age > anonymousAge
            }
            if stale { try? Sys.unlink(path) }
        }
    }
}

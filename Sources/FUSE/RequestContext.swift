/// `RequestContext`: who made a request (`fuse_req_ctx`).

import CFuse
import Glibc
import POSIX

/// The calling process of a request. For writes from the page cache these may be zero.
public struct RequestContext: Hashable, Sendable {
    public var uid: uid_t
    public var gid: gid_t
    public var pid: pid_t
    public var umask: mode_t

    public init(uid: uid_t = 0, gid: gid_t = 0, pid: pid_t = 0, umask: mode_t = 0o022) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
        self.umask = umask
    }

    /// Reads `fuse_req_ctx(request)`.
    init(request: fuse_req_t) {
        let context = fuse_req_ctx(request)!.pointee
        self.init(uid: context.uid, gid: context.gid, pid: context.pid, umask: context.umask)
    }
}

extension RequestContext {
    /// The supplementary groups of process (thread) `pid`, read from `/proc/PID/task/PID/status`
    /// as libfuse's `fuse_req_getgroups` reads them (that call needs the live request); empty when
    /// the process is gone or the file cannot be read.
    public static func supplementaryGroups(of pid: pid_t) -> [gid_t] {
        guard pid > 0 else { return [] }
        for path in ["/proc/\(pid)/task/\(pid)/status", "/proc/\(pid)/status"] {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            let bytes = (try? Syscall.readToEnd(fd, limit: 1 << 20, path: path)) ?? []  // a status file is a few KB
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("Groups:") {
                return line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { gid_t($0) }
            }
            return []
        }
        return []
    }
}

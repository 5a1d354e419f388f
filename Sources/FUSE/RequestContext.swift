/// `RequestContext`: who made a request (`fuse_req_ctx`).

import CFuse
import Glibc

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

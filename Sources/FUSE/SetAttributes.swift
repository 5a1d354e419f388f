/// `SetAttributes` and `TimeChange`: what a setattr request asks to change.

import CFuse
import Glibc

/// A new access or modification time: an explicit value, or "now" (`UTIME_NOW`, `touch`).
public enum TimeChange: Hashable, Sendable {
    /// Set the time to the filesystem's current time.
    case now
    /// Set the time to this value.
    case time(FileTime)

    /// The time to store: `now` for `.now`.
    public func resolved(now: FileTime = .now) -> FileTime {
        switch self {
        case .now: now
        case .time(let time): time
        }
    }
}

/// The attributes a setattr request changes; nil fields stay as they are.
public struct SetAttributes: Hashable, Sendable {
    public var mode: mode_t?
    public var uid: uid_t?
    public var gid: gid_t?
    /// New size (truncate / extend).
    public var size: UInt64?
    public var accessTime: TimeChange?
    public var modificationTime: TimeChange?
    /// Explicit ctime (rare; the filesystem normally sets ctime itself on any change).
    public var changeTime: FileTime?
    /// The file handle when the change came through an open file (`ftruncate`, `futimens`).
    public var handle: UInt64?
    /// The raw `FUSE_SET_ATTR_*` mask, for flags not modelled above (e.g. kill-suid).
    public var rawMask: Int32

    public init(
        mode: mode_t? = nil, uid: uid_t? = nil, gid: gid_t? = nil, size: UInt64? = nil,
        accessTime: TimeChange? = nil, modificationTime: TimeChange? = nil,
        changeTime: FileTime? = nil, handle: UInt64? = nil, rawMask: Int32 = 0
    ) {
        self.mode = mode
        self.uid = uid
        self.gid = gid
        self.size = size
        self.accessTime = accessTime
        self.modificationTime = modificationTime
        self.changeTime = changeTime
        self.handle = handle
        self.rawMask = rawMask
    }

    /// Decodes libfuse's setattr arguments (`attr`, `to_set`, `fi`).
    init(stat st: stat, mask: Int32, handle: UInt64?) {
        func has(_ bit: Int32) -> Bool { mask & bit != 0 }
        self.init(handle: handle, rawMask: mask)
        if has(FUSE_SET_ATTR_MODE) { mode = st.st_mode }
        if has(FUSE_SET_ATTR_UID) { uid = st.st_uid }
        if has(FUSE_SET_ATTR_GID) { gid = st.st_gid }
        if has(FUSE_SET_ATTR_SIZE) { size = UInt64(clamping: st.st_size) }
        if has(FUSE_SET_ATTR_ATIME_NOW) {
            accessTime = .now
        } else if has(FUSE_SET_ATTR_ATIME) {
            accessTime = .time(FileTime(st.st_atim))
        }
        if has(FUSE_SET_ATTR_MTIME_NOW) {
            modificationTime = .now
        } else if has(FUSE_SET_ATTR_MTIME) {
            modificationTime = .time(FileTime(st.st_mtim))
        }
        if has(FUSE_SET_ATTR_CTIME) { changeTime = FileTime(st.st_ctim) }
    }
}

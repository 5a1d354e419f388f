/// `DirectoryBuffer` and `DirectoryPlusBuffer`: readdir/readdirplus reply buffers the filesystem fills.
///
/// Lookup counting with readdirplus: every entry that `DirectoryPlusBuffer.add` packs (returns
/// `true` for), except `.` and `..`, gives the kernel one more lookup reference to `entry.inode`,
/// exactly like a lookup reply. The filesystem increments its lookup count for those entries only
/// (`addsLookupReference(for:)` tells which), and never for entries `add` refused because the buffer
/// was full: those will be asked for again at their offset. If the reply then fails to reach the
/// kernel (interrupted request), the module undoes the references by calling
/// `FileSystem.forget(_:)` for the packed entries, so the filesystem's counts stay balanced.

import CFuse
import Glibc

/// The reply buffer of a readdir request: add entries until `add` returns false.
public final class DirectoryBuffer {
    let request: fuse_req_t
    let capacity: Int
    let storage: UnsafeMutableRawPointer
    /// Bytes used so far.
    private(set) var used = 0
    /// Number of entries packed so far.
    public private(set) var count = 0

    init(request: fuse_req_t, capacity: Int) {
        self.request = request
        self.capacity = capacity
        self.storage = UnsafeMutableRawPointer.allocate(byteCount: max(capacity, 1), alignment: 8)
    }

    deinit { storage.deallocate() }

    /// Packs one entry (`fuse_add_direntry`); returns false, packing nothing, when it does not fit.
    ///
    /// - Parameters:
    ///   - name: the entry's name.
    ///   - inode: its inode number (only informational for readdir).
    ///   - mode: its mode; only the file type bits are used.
    ///   - nextOffset: the offset the kernel passes to continue *after* this entry; must be stable.
    public func add(_ name: FileName, inode: Inode, mode: mode_t, nextOffset: Int64) -> Bool {
        var st = stat()
        st.st_ino = ino_t(inode)
        st.st_mode = mode
        let remaining = capacity - used
        let needed = name.withCString {
            fuse_add_direntry(request, nil, 0, $0, nil, 0)
        }
        guard needed <= remaining else { return false }
        name.withCString {
            _ = fuse_add_direntry(
                request, (storage + used).assumingMemoryBound(to: CChar.self), remaining, $0, &st,
                off_t(nextOffset))
        }
        used += needed
        count += 1
        return true
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: used) }
}

/// The reply buffer of a readdirplus request: add entries with full attributes until `add` returns
/// false. See the file comment for how this interacts with lookup counts.
public final class DirectoryPlusBuffer {
    let request: fuse_req_t
    let capacity: Int
    let storage: UnsafeMutableRawPointer
    private(set) var used = 0
    /// Number of entries packed so far.
    public private(set) var count = 0
    /// Inodes that gained a kernel lookup reference through this buffer (packed, not `.`/`..`).
    public private(set) var referencedInodes: [Inode] = []

    init(request: fuse_req_t, capacity: Int) {
        self.request = request
        self.capacity = capacity
        self.storage = UnsafeMutableRawPointer.allocate(byteCount: max(capacity, 1), alignment: 8)
    }

    deinit { storage.deallocate() }

    /// True when packing `name` gives the kernel a lookup reference (every name but `.` and `..`).
    public static func addsLookupReference(for name: FileName) -> Bool { !name.isDotOrDotDot }

    /// Packs one entry (`fuse_add_direntry_plus`); returns false, packing nothing, when it does
    /// not fit.
    ///
    /// When it returns true and `name` is not `.` or `..`, the kernel now holds one more lookup
    /// reference to `entry.inode`: increment the filesystem's lookup count for it, as for a lookup.
    /// - Parameter nextOffset: the offset the kernel passes to continue after this entry.
    public func add(_ name: FileName, entry: Entry, nextOffset: Int64) -> Bool {
        let remaining = capacity - used
        let needed = name.withCString {
            fuse_add_direntry_plus(request, nil, 0, $0, nil, 0)
        }
        guard needed <= remaining else { return false }
        var parameter = entry.parameter
        if name.isDotOrDotDot {
            // The kernel ignores the node id of dot entries; send no reference for them.
            parameter.ino = 0
        }
        name.withCString {
            _ = fuse_add_direntry_plus(
                request, (storage + used).assumingMemoryBound(to: CChar.self), remaining, $0,
                &parameter, off_t(nextOffset))
        }
        used += needed
        count += 1
        if !name.isDotOrDotDot { referencedInodes.append(entry.inode) }
        return true
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: used) }
}

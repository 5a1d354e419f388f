/// `FileSystem`: the Swift protocol a filesystem implements, one method per low-level FUSE operation.
///
/// Conventions for every operation:
/// - It runs synchronously on a libfuse worker thread, several at once (hence `Sendable`).
/// - It returns its reply or throws an `Errno` (typed throws: map your own errors at your boundary,
///   `Errno(error)` maps anything that is not an `Errno` to `EIO`). The module replies exactly once.
/// - `context` is the calling process (uid, gid, pid, umask).
/// - Names are raw bytes (`FileName`); `name.string` is nil when they are not UTF-8.
/// - Offsets are byte offsets (`Int64`), handles are whatever `open`/`create`/`opendir` returned.
///
/// Lookup counts: each `Entry` returned by `lookup`, `mknod`, `mkdir`, `symlink`, `link` and
/// `create` gives the kernel one lookup reference to the entry's inode, as does each entry packed by
/// `DirectoryPlusBuffer.add` (except `.` and `..`). Increment the count before returning; the
/// kernel gives references back through `forget`. If a reply cannot be delivered (the request was
/// interrupted), the module calls `forget` itself to undo it. Free an inode only when its link count
/// and its lookup count are both zero. Lookup counts die with the mount: after unmount every inode
/// is forgotten implicitly (no `forget` calls are sent for them).
///
/// Defaults (see `FileSystem+Defaults.swift`): required are `lookup` and `getattr`; mutations
/// default to `EPERM`, `create` to `ENOSYS` (the kernel then uses mknod + open), xattr operations,
/// `readlink`, `read` and `write` to `ENOSYS`; `open`/`opendir` succeed with handle 0; `flush`,
/// `release`, `releasedir`, `fsync`, `fsyncdir`, `access`, `forget`, `initialize`, `destroy`
/// succeed doing nothing; `implementsReaddirplus` is false (the kernel then only sends readdir).
import Glibc

public protocol FileSystem: Sendable {
    /// True when `readdirplus` is implemented: the module then enables `FUSE_CAP_READDIRPLUS`
    /// (with `READDIRPLUS_AUTO`), otherwise the kernel only sends `readdir`.
    var implementsReaddirplus: Bool { get }

    /// Called once when the kernel connects (`init`), on the loop thread, before any request. Start
    /// timers and threads here (not before: `fuse_daemonize` forks). May change `connection.want`.
    /// `notifier` sends cache invalidations (from threads other than request handlers).
    func initialize(connection: inout ConnectionInfo, notifier: Notifier)

    /// Called once when the session ends (unmount, SIGTERM/SIGINT): make everything durable.
    func destroy()

    /// Looks up `name` in directory `parent`. Counts a lookup reference on success.
    func lookup(_ context: RequestContext, parent: Inode, name: FileName) throws(Errno) -> Entry

    /// The kernel drops `lookups` references to `inode`.
    func forget(_ inode: Inode, lookups: UInt64)

    /// Batch form of `forget` (`forget_multi`); the default calls `forget` for each.
    func forget(_ items: [(inode: Inode, lookups: UInt64)])

    /// Attributes of `inode`; `handle` is set when called through an open file.
    func getattr(_ context: RequestContext, inode: Inode, handle: UInt64?) throws(Errno) -> AttributesReply

    /// Changes the attributes in `changes` (chmod, chown, truncate, utimens) and returns the result.
    func setattr(_ context: RequestContext, inode: Inode, changes: SetAttributes) throws(Errno) -> AttributesReply

    /// The target of symbolic link `inode`, as raw bytes.
    func readlink(_ context: RequestContext, inode: Inode) throws(Errno) -> [UInt8]

    /// Creates a file node (regular, device, fifo, socket).
    func mknod(_ context: RequestContext, parent: Inode, name: FileName, mode: mode_t, rdev: UInt64) throws(Errno) -> Entry

    /// Creates a directory. `mode` excludes the file type bits; apply `context.umask` if you want.
    func mkdir(_ context: RequestContext, parent: Inode, name: FileName, mode: mode_t) throws(Errno) -> Entry

    /// Removes a non-directory name.
    func unlink(_ context: RequestContext, parent: Inode, name: FileName) throws(Errno)

    /// Removes an empty directory (throw `.notEmpty` otherwise).
    func rmdir(_ context: RequestContext, parent: Inode, name: FileName) throws(Errno)

    /// Creates symbolic link `name` in `parent` pointing to `target`.
    func symlink(_ context: RequestContext, target: [UInt8], parent: Inode, name: FileName) throws(Errno) -> Entry

    /// Renames; `flags` may hold `RenameFlags.noReplace` (fail with `.exists`) or `.exchange`.
    func rename(
        _ context: RequestContext, parent: Inode, name: FileName, newParent: Inode, newName: FileName,
        flags: RenameFlags
    ) throws(Errno)

    /// Creates hard link `newName` in `newParent` to `inode`.
    func link(_ context: RequestContext, inode: Inode, newParent: Inode, newName: FileName) throws(Errno) -> Entry

    /// Opens a file; `flags` are the open(2) flags (`O_RDONLY`, `O_APPEND`, ...).
    func open(_ context: RequestContext, inode: Inode, flags: Int32) throws(Errno) -> Opened

    /// Reads up to `size` bytes at `offset`; fewer bytes means end of file.
    func read(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, size: Int) throws(Errno) -> [UInt8]

    /// Writes `data` at `offset`; returns the number of bytes written.
    func write(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, data: UnsafeRawBufferPointer, flags: Int32)
        throws(Errno) -> Int

    /// Called on each close(2) of a file descriptor (may be several per open).
    func flush(_ context: RequestContext, inode: Inode, handle: UInt64) throws(Errno)

    /// The last reference to an open file is gone; `flags` are the open flags. Errors are ignored
    /// by the kernel.
    func release(_ context: RequestContext, inode: Inode, handle: UInt64, flags: Int32) throws(Errno)

    /// fsync(2)/fdatasync(2) (`dataOnly`).
    func fsync(_ context: RequestContext, inode: Inode, handle: UInt64, dataOnly: Bool) throws(Errno)

    /// fallocate(2)/posix_fallocate(3) on an open file (`mode` as fallocate(2)'s flags).
    func fallocate(_ context: RequestContext, inode: Inode, handle: UInt64, mode: AllocateMode, offset: Int64, length: Int64) throws(Errno)

    /// Opens a directory; snapshot the listing here so readdir offsets stay stable.
    func opendir(_ context: RequestContext, inode: Inode, flags: Int32) throws(Errno) -> Opened

    /// Lists entries starting at `offset` (0 = start; otherwise a `nextOffset` you gave before).
    /// Add entries to `buffer` until `add` returns false. If you throw after adding entries, those
    /// entries are replied and the error is dropped.
    func readdir(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, into buffer: DirectoryBuffer) throws(Errno)

    /// Like `readdir` with full entries; count a lookup reference for each entry `add` accepted,
    /// except `.` and `..` (see `DirectoryPlusBuffer`).
    func readdirplus(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, into buffer: DirectoryPlusBuffer) throws(Errno)

    /// Closes a directory handle.
    func releasedir(_ context: RequestContext, inode: Inode, handle: UInt64) throws(Errno)

    /// fsync(2) on a directory.
    func fsyncdir(_ context: RequestContext, inode: Inode, handle: UInt64, dataOnly: Bool) throws(Errno)

    /// Filesystem statistics (`df`).
    func statfs(_ context: RequestContext, inode: Inode) throws(Errno) -> FilesystemStatistics

    /// Sets extended attribute `name`; `flags` may be `XattrFlags.create` / `.replace`.
    func setxattr(_ context: RequestContext, inode: Inode, name: FileName, value: [UInt8], flags: XattrFlags) throws(Errno)

    /// The value of extended attribute `name` (throw `.noAttribute` if absent). The module handles
    /// the size probe (size 0) and `ERANGE`.
    func getxattr(_ context: RequestContext, inode: Inode, name: FileName) throws(Errno) -> [UInt8]

    /// Names of the extended attributes. The module packs them and handles size probe / `ERANGE`.
    func listxattr(_ context: RequestContext, inode: Inode) throws(Errno) -> [FileName]

    /// Removes extended attribute `name` (throw `.noAttribute` if absent).
    func removexattr(_ context: RequestContext, inode: Inode, name: FileName) throws(Errno)

    /// access(2) check; with `default_permissions` (always on here) the kernel checks modes itself.
    func access(_ context: RequestContext, inode: Inode, mask: Int32) throws(Errno)

    /// Creates and opens a file. Counts a lookup reference on success.
    func create(_ context: RequestContext, parent: Inode, name: FileName, mode: mode_t, flags: Int32) throws(Errno) -> (Entry, Opened)

    /// Creates and opens an unnamed file in directory `parent` (`open(dir, O_TMPFILE)`), which a
    /// later `link` gives a name (Tmpfile.swift). Counts a lookup reference on success.
    func tmpfile(_ context: RequestContext, parent: Inode, mode: mode_t, flags: Int32) throws(Errno) -> (Entry, Opened)

    /// The inode flags `FS_IOC_GETFLAGS` reads (``InodeFlags``; `lsattr`).
    func getFlags(_ context: RequestContext, inode: Inode) throws(Errno) -> InodeFlags

    /// Sets the inode flags (`FS_IOC_SETFLAGS`, `chattr`); the kernel has checked that the caller
    /// owns the file, the filesystem checks the rest (root alone changes append-only and immutable).
    func setFlags(_ context: RequestContext, inode: Inode, flags: InodeFlags) throws(Errno)
}

/// Inode flags (`FS_*_FL` of `linux/fs.h`), as `lsattr`/`chattr` show and set them.
public struct InodeFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `FS_IMMUTABLE_FL` (`i`): no change at all, no new name, no removal.
    public static let immutable = InodeFlags(rawValue: 0x10)
    /// `FS_APPEND_FL` (`a`): writes only at the end; no truncation, no removal.
    public static let appendOnly = InodeFlags(rawValue: 0x20)
    /// `FS_NODUMP_FL` (`d`).
    public static let noDump = InodeFlags(rawValue: 0x40)
    /// `FS_NOATIME_FL` (`A`).
    public static let noAccessTime = InodeFlags(rawValue: 0x80)
}

/// `renameat2(2)` flags.
public struct RenameFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `RENAME_NOREPLACE`: fail with `EEXIST` if the target exists.
    public static let noReplace = RenameFlags(rawValue: 1)
    /// `RENAME_EXCHANGE`: atomically swap the two names.
    public static let exchange = RenameFlags(rawValue: 2)
    /// `RENAME_WHITEOUT` (overlayfs).
    public static let whiteout = RenameFlags(rawValue: 4)
}

/// `setxattr(2)` flags.
public struct XattrFlags: OptionSet, Hashable, Sendable {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    /// `XATTR_CREATE`: fail with `EEXIST` if the attribute exists.
    public static let create = XattrFlags(rawValue: 1)
    /// `XATTR_REPLACE`: fail with `ENODATA` if the attribute does not exist.
    public static let replace = XattrFlags(rawValue: 2)
}

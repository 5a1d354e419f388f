import FUSE

/// What the mount remembers of each inode between requests: the change tag whose pages the
/// kernel may hold (``cachedTag``, for `keep_cache`), and the atime a read moved and no save has
/// written yet (``accessTime``, see ``FileTimes``). Kept in ``FileSystemState`` and guarded by its
/// lock.
///
/// Both are set for every note read after a mount, so at 100,000 notes this is 100,000 entries. Two
/// dictionaries (`[Inode: String]`, `[Inode: FileTime]`) took 24 bytes an entry each, in tables
/// of 262,144 buckets: 12.6 MB. Here one table holds both as two 8-byte numbers: the change tag as
/// the commit number the store writes it from (`String(seq, radix: 36)`), the atime as nanoseconds
/// since 1970. A tag written otherwise is not kept (the next open then drops the kernel's pages,
/// as for an unknown tag: slower, never stale), and an atime that nanoseconds cannot hold exactly
/// (before 1677 or after 2262) is kept apart, whole.
///
/// While its record lives, an inode the kernel may hold pages of is never forgotten
/// (``mayHoldPages(_:)``): a tag not kept, or forgotten, is `unknownTag`, not `noTag`. Only an
/// inode no one opened since the mount has no pages, so that a read-only open may store its bytes
/// (``NotesFileSystem/storePagesForOpen(_:)``).
struct InodeCaches {
    private struct Entry {
        /// `noTag` for none.
        var tag: UInt64 = InodeCaches.noTag
        /// `noAccessTime` for none.
        var access: Int64 = InodeCaches.noAccessTime
        var isEmpty: Bool { tag == InodeCaches.noTag && access == InodeCaches.noAccessTime }
    }

    /// No open since the mount: the kernel holds no pages of the inode.
    private static let noTag = UInt64.max
    /// The kernel may hold pages, of a tag not kept.
    private static let unknownTag = UInt64.max - 1
    private static let noAccessTime = Int64.min

    private var entries: [Inode: Entry] = [:]
    /// Access times outside what ``Entry/access`` holds exactly (rare: set by `utimensat`).
    private var farAccessTimes: [Inode: FileTime] = [:]

    /// The change tag whose pages the kernel may hold for `inode`; nil for none (or one that is
    /// not a commit number in the store's spelling: such a tag is not kept).
    subscript(cachedTag inode: Inode) -> String? {
        get { entries[inode].flatMap { $0.tag >= Self.unknownTag ? nil : String($0.tag, radix: 36) } }
        set { update(inode) { $0.tag = newValue.flatMap(Self.commitNumber) ?? Self.unknownTag } }
    }

    /// Whether the kernel may hold pages of `inode`: it was opened (or its tag forgotten) since
    /// the mount.
    func mayHoldPages(_ inode: Inode) -> Bool {
        entries[inode].map { $0.tag != Self.noTag } ?? false
    }

    /// The atime a read moved (or a new file was given) and no save has written yet.
    subscript(accessTime inode: Inode) -> FileTime? {
        get {
            if let access = entries[inode]?.access, access != Self.noAccessTime { return NotesFileSystem.fileTime(nanoseconds: access) }
            return farAccessTimes[inode]
        }
        set {
            let exact = newValue.flatMap(Self.exactNanoseconds)
            farAccessTimes[inode] = exact == nil ? newValue : nil
            update(inode) { $0.access = exact ?? Self.noAccessTime }
        }
    }

    /// Takes `inode`'s unsaved atime out (for the save that writes it).
    mutating func removeAccessTime(_ inode: Inode) -> FileTime? {
        let time = self[accessTime: inode]
        self[accessTime: inode] = nil
        return time
    }

    /// Forgets both of `inode`'s: its record is gone, or another took its place under a new
    /// identity. Identities are never handed out again, so no open reaches this inode any more:
    /// nothing is kept (a mount that deletes a million notes keeps no million entries).
    mutating func remove(_ inode: Inode) {
        entries[inode] = nil
        farAccessTimes[inode] = nil
    }

    /// Forgets every cached tag (the kernel's pages may all be stale); the atimes stay.
    mutating func removeAllTags() {
        for inode in Array(entries.keys) where mayHoldPages(inode) { update(inode) { $0.tag = Self.unknownTag } }
    }

    private mutating func update(_ inode: Inode, _ change: (inout Entry) -> Void) {
        var entry = entries[inode] ?? Entry()
        change(&entry)
        entries[inode] = entry.isEmpty ? nil : entry
    }

    /// The commit number `tag` spells, when it spells it as the store does (lowercase base 36, no
    /// leading zeros), so that the number gives the same string back.
    private static func commitNumber(_ tag: String) -> UInt64? {
        guard let number = UInt64(tag, radix: 36), number < unknownTag, String(number, radix: 36) == tag else { return nil }
        return number
    }

    /// `time` in nanoseconds since 1970, when that number gives `time` back exactly.
    private static func exactNanoseconds(_ time: FileTime) -> Int64? {
        guard let nanoseconds = NotesFileSystem.nanoseconds(time), nanoseconds != noAccessTime,
            NotesFileSystem.fileTime(nanoseconds: nanoseconds) == time
        else { return nil }
        return nanoseconds
    }
}

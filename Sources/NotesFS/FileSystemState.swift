import FUSE
import Foundation
import Notes

/// Everything the filesystem keeps between operations, guarded by ``NotesFileSystem/state``: one
/// part per concern, each with its invariants written beside it and checked after every operation
/// in debug builds (``checkInvariants()``, called by ``NotesFileSystem/locked(_:)``).
///
/// Operations name the part they change (`state.files.open`, `state.names.listings`, …).
struct FileSystemState: ~Copyable {
    /// Names ↔ inodes: listings, the folder tree, parents, detached records and rename aliases.
    var names = NameTable()
    /// Open files: their buffers, handles, readers and the read cache.
    var files = OpenFileTable()
    /// Open directory handles.
    var directories = OpenDirectoryTable()
    /// Scratch files (editor temporaries and O_TMPFILE files): not records.
    var scratchFiles = ScratchTable()
    /// What the kernel's caches may hold, and the page-cache stores in flight.
    var pageCache = PageCacheState()
    /// The virtual trees' directories and links (`.recent`, `.search`): inodes, lookup counts and
    /// what each directory's tree last answered.
    var virtualNodes = VirtualNodeTable()
    /// Open virtual files (`.history`'s versions): handle → the bytes the open read
    /// (`NotesFileSystem+VirtualFiles.swift`).
    var virtualFiles: [UInt64: VirtualFileSource] = [:]
    /// The next handle number: file, directory and virtual-file handles share one sequence.
    var nextHandle: UInt64 = 1
    /// How many store changes ``NotesFileSystem/applyPendingChanges(_:)`` applied: what the
    /// virtual directories' caches are keyed by.
    var appliedChanges: UInt64 = 0

    mutating func newHandle() -> UInt64 {
        defer { nextHandle += 1 }
        return nextHandle
    }

    mutating func beginStore(_ inode: Inode) { pageCache.storing[inode, default: 0] += 1 }

    mutating func endStore(_ inode: Inode) {
        let remaining = (pageCache.storing[inode] ?? 1) - 1
        pageCache.storing[inode] = remaining > 0 ? remaining : nil
    }

    /// The invariants of every part, and those between parts: every handle number (file,
    /// directory, virtual file) was handed out by ``newHandle()`` and names one kind of handle only.
    /// Returns what does not hold (empty when all do).
    func invariantViolations() -> [String] {
        var problems = names.invariantViolations() + files.invariantViolations() + directories.invariantViolations()
        problems += scratchFiles.invariantViolations() + pageCache.invariantViolations()
        let fileHandles = Set(files.handles.keys)
        let directoryHandles = Set(directories.snapshots.keys)
        let virtualHandles = Set(virtualFiles.keys)
        for handle in fileHandles.union(directoryHandles).union(virtualHandles) where handle >= nextHandle {
            problems.append("handle \(handle) is not below the next handle \(nextHandle)")
        }
        if !fileHandles.isDisjoint(with: directoryHandles) || !fileHandles.isDisjoint(with: virtualHandles)
            || !directoryHandles.isDisjoint(with: virtualHandles)
        {
            problems.append("a handle number names two kinds of handle")
        }
        return problems
    }

    /// Stops a debug build when an invariant does not hold (nothing in a release build).
    func checkInvariants(after operation: @autoclosure () -> String = "an operation") {
        #if DEBUG
            let problems = invariantViolations()
            if !problems.isEmpty {
                let message = "filesystem state invariants broken after \(operation()): " + problems.joined(separator: "; ")
                Log.error(message)
                assertionFailure(message)
            }
        #endif
    }
}

/// Names ↔ inodes (`NotesFileSystem+Tree.swift`).
///
/// Invariants: no inode is its own parent (`parentOf`) or its own alias (`aliases`). Written
/// down, not checked (each costs a walk of every listing): every listed entry's `parentOf` is the
/// directory whose listing holds it; `folderTree` is nil or matches the folder records; a detached
/// record is in no listing.
struct NameTable: ~Copyable {
    /// Directory listings built so far (root and folders), kept up to date incrementally.
    var listings: [Inode: DirectoryListing] = [:]
    /// The folder hierarchy (nil: compute on next use); recomputed when a change touches folders.
    var folderTree: FolderTree?
    /// The directory each listed entry is in.
    var parentOf: [Inode: Inode] = [:]
    /// Records hidden by a rename to a scratch name, by their directory and old name.
    var detached: [Inode: [String: Inode]] = [:]
    /// The source inode of a rename onto an existing record → the target's inode: the kernel maps
    /// the target name to the source inode until it hears the invalidation (sent after the reply).
    var aliases: [Inode: Inode] = [:]

    func invariantViolations() -> [String] {
        var problems: [String] = []
        for (child, parent) in parentOf where child == parent { problems.append("inode \(child) is its own parent") }
        for (source, target) in aliases where source == target { problems.append("inode \(source) is its own alias") }
        return problems
    }

    /// Where `inodes` break "every listed entry's `parentOf` is the directory whose listing holds
    /// it": a look-up in every listing for each (for the few inodes a change touched).
    func listingViolations(of inodes: [Inode]) -> [String] {
        var problems: [String] = []
        for inode in inodes {
            let parent = parentOf[inode]
            for (directory, listing) in listings where listing.members[inode] != nil && directory != parent {
                problems.append("inode \(inode) is listed in directory \(directory), its parent is \(parent.map { "\($0)" } ?? "none")")
            }
        }
        return problems
    }
}

/// Open files (`NotesFileSystem+Files.swift`).
///
/// Invariants: a buffer's count of writable handles is never negative and never more than the
/// handles open on its inode; every reader count is positive; the read cache holds only inodes
/// a reader has open.
struct OpenFileTable: ~Copyable {
    /// Open inodes' shared contents.
    var open: [Inode: OpenFile] = [:]
    /// File handle → inode.
    var handles: [UInt64: Inode] = [:]
    /// Read-only handles open per inode, and the stored text of those inodes that are text notes
    /// (by change tag; at most `NotesFileSystem.readCacheLimit` bytes in all). Attachments and
    /// notes kept as bytes are read with `pread` from their asset file, never cached here.
    var readers: [Inode: Int] = [:]
    var readCache: [Inode: (tag: String, bytes: [UInt8])] = [:]
    /// Files whose save failed at their last close (a full disk, an I/O error): their buffers
    /// are saved again by ``NotesFileSystem/retryFailedSaves()``.
    var failedSaves: Set<Inode> = []

    func invariantViolations() -> [String] {
        var problems: [String] = []
        var handlesPerInode: [Inode: Int] = [:]
        for inode in handles.values { handlesPerInode[inode, default: 0] += 1 }
        for (inode, file) in open {
            if file.handles < 0 { problems.append("inode \(inode): \(file.handles) writable handles") }
            if file.handles > handlesPerInode[inode] ?? 0 {
                problems.append("inode \(inode): \(file.handles) writable handles, \(handlesPerInode[inode] ?? 0) handles open")
            }
        }
        for (inode, count) in readers where count <= 0 { problems.append("inode \(inode): \(count) readers") }
        for inode in readCache.keys where readers[inode] == nil { problems.append("inode \(inode): read cache without a reader") }
        return problems
    }
}

/// Open directory handles (`NotesFileSystem+Directories.swift`, `+Virtual.swift`).
///
/// Invariants: every open real folder has a snapshot; a removed directory is one a handle still
/// holds open.
struct OpenDirectoryTable: ~Copyable {
    /// Directory handle → the listing snapshot taken at opendir.
    var snapshots: [UInt64: [DirectorySnapshotEntry]] = [:]
    /// Directory handle → the folder's inode (real folders only).
    var open: [UInt64: Inode] = [:]
    /// Folders deleted (rmdir, a rename over them, elsewhere) while a directory handle held them
    /// open: what `fstat` of that handle shows (link count 0) until its last handle closes, as on
    /// any Linux filesystem.
    var removed: [Inode: Attributes] = [:]

    func invariantViolations() -> [String] {
        var problems: [String] = []
        for handle in open.keys where snapshots[handle] == nil { problems.append("directory handle \(handle) has no snapshot") }
        let held = Set(open.values)
        for inode in removed.keys where !held.contains(inode) { problems.append("removed directory \(inode) is held by no handle") }
        return problems
    }
}

/// Scratch files (`Tree/ScratchFile.swift`).
///
/// Invariants: each is kept under its own inode; a named one's inode is from the scratch range
/// (2^48 up) and below the next one handed out (an O_TMPFILE file has a reserved record identity).
struct ScratchTable: ~Copyable {
    var files: [Inode: ScratchFile] = [:]
    var nextInode: Inode = 1 << 48

    func invariantViolations() -> [String] {
        var problems: [String] = []
        for (inode, file) in files {
            if file.inode != inode { problems.append("scratch file \(file.inode) kept under inode \(inode)") }
            if inode >= 1 << 48, inode >= nextInode { problems.append("scratch inode \(inode) not below the next \(nextInode)") }
        }
        return problems
    }
}

/// What the kernel's caches may hold (`Files/InodeCaches.swift`), and the page-cache stores in
/// flight (`NotesFileSystem+PageCache.swift`).
///
/// Invariants: every store count is positive; the queued store bytes are never negative.
struct PageCacheState: ~Copyable {
    /// For each inode: the change tag whose pages the kernel may hold (`keep_cache` when unchanged),
    /// and the atime a read moved (relatime) that no save has written yet (``FileTimes``).
    var inodeCaches = InodeCaches()
    /// Inodes whose page-cache store is being sent now (by the notification thread, or by a
    /// read-only open, ``NotesFileSystem/storePagesForOpen(_:)``), with how many stores of each:
    /// opens and truncates of them wait (``NotesFileSystem/lockedOutsideStore(_:when:_:)``).
    var storing: [Inode: Int] = [:]
    /// Bytes of `.store` notifications queued in the outbox (at most `NotesFileSystem.storeQueueLimit`).
    var queuedStoreBytes = 0

    func invariantViolations() -> [String] {
        var problems: [String] = []
        for (inode, count) in storing where count <= 0 { problems.append("inode \(inode): \(count) stores in flight") }
        if queuedStoreBytes < 0 { problems.append("\(queuedStoreBytes) bytes of stores queued") }
        return problems
    }
}

import FUSE
import Foundation
import Notes
import RecordStore
import Synchronization

/// The notes filesystem: folders as directories, notes as `Title.md`, other files as attachments.
///
/// Inode numbers are record identities (stable for a record's life, across renames, saves and
/// remounts); the root is inode 1; scratch files get numbers from 2^48 up, the nodes of the
/// virtual `.recent`, `.search` and `.history` trees from 2^56 up (``VirtualNodeTable``). Store changes (this
/// mount's own and other processes') arrive through a store observer, are applied to the directory
/// listings at the start of the next operation, and the kernel is told about changed names and
/// contents from a separate thread.
///
/// Locks, in the order they may be taken (never the other way round):
/// 1. ``OpenFile/operationLock``, one per open file: serialises that file's write, truncate and
///    save, so that a save streams bytes no write is changing. Held across a save's I/O.
/// 2. `state` (``FileSystemState``): the inode table, listings, open-file and handle maps, caches,
///    and the `var` properties of ``OpenFile`` and ``ScratchFile``. Held for bookkeeping, store
///    metadata lookups and the commit of a save (one `modify`), **not** while file bytes are read,
///    written, hashed or copied: a save takes its plan under the lock, makes the asset outside it
///    and commits under it again, checking the record's change tag (and the file's generation)
///    did not move meanwhile; an asset is loaded into a buffer outside it and installed if the tag
///    is unchanged; reads and writes capture the buffer or asset path under it and do the I/O
///    after. Exceptions, where bytes are streamed while holding it: unmount's `flushAll`, a rename
///    that moves a scratch or pending file's bytes into a record, unlink of a file still open, and
///    an outside change refreshing a clean open buffer.
/// 3. Leaf locks, under which nothing else is taken: each ``ContentBuffer``'s storage,
///    `pendingChanges`, `outbox`, `notificationsSent`, `notifierBox`, `databaseBox`, `searchBox`,
///    `storesEnded`, the background workers' own locks (`notifications`, `pruning`), and ``NoteHistory``'s catalog
///    cache (made outside it: making one takes the state lock).
///
/// Kernel notifications (invalidations and page-cache stores) are sent by the notification thread
/// alone, holding none of these locks (`NotesFileSystem+Notifications.swift`,
/// `NotesFileSystem+PageCache.swift`). An open or a truncate that waits for a page-cache store
/// waits on `storesEnded` holding no lock (``lockedOutsideStore(_:when:_:)``).
///
/// Memory: the daemon's RSS does not depend on file sizes. An open file keeps at most
/// ``ContentBuffer/memoryLimit`` (1 MiB) in memory, the rest in an unlinked temp file in the
/// database's `tmp/`; a read holds at most the requested size (≤ 1 MiB); a save or load streams
/// in 1 MiB chunks; a note's inline text is at most `Note.maxInlineTextBytes` (8 MiB) while it is
/// validated or read, and read caches hold at most ``readCacheLimit`` (32 MiB). So the bound is
/// about the store's index plus (1 MiB × open files) + (9 MiB × concurrent saves and reads of
/// text notes) + 32 MiB: under 200 MB for a mount of thousands of notes with a few files open,
/// measured at 22-26 MiB peak for a 10 GiB `truncate`, a 4 GiB sparse write and a 1 GB copy.
public final class NotesFileSystem: FileSystem {
    /// How the mount behaves.
    public struct Options: Sendable {
        /// `-o sync`: every close makes the note durable (calls the store's `sync()`).
        public var synchronous = false
        /// Owner of the root directory and of records without ownership fields.
        public var uid: uid_t = getuid()
        public var gid: gid_t = getgid()
        /// Kernel cache time for entries and attributes, in seconds. Changes made elsewhere are
        /// pushed to the kernel as invalidations, so this can be long: at 100,000 notes a single
        /// `ls -lR` or `grep -r` outlasts 10 s, and every expired entry costs a `lookup` round trip.
        public var cacheTimeout: Double = 60
        /// `-o noatime`: a read never moves a file's atime (else it moves relatime-style, see
        /// ``FileTimes``), so a read-only open of a note no one opened since the mount can hand
        /// the kernel its bytes at once (``storePagesForOpen(_:)``).
        public var noAccessTime = false
        /// `-o strictatime`: every read moves the atime (else relatime's rule, ``FileTimes``).
        public var strictAccessTime = false
        /// `-o nodiratime`: listing a folder never moves its atime.
        public var noDirectoryAccessTime = false
        /// `-o nolinks`: a rename leaves the links to what it moves as they are (else every link
        /// that resolved to a moved file is rewritten in the rename's commit, ``LinkRewrites``).
        public var noLinkRewriting = false
        /// The search behind `.search/QUERY` (``NoteSearching``), made once the database is open;
        /// by default ``IndexedSearch`` (the full-text index, ``StoreSearch`` while it is built).
        public var search: @Sendable (RecordDatabase) -> any NoteSearching = { IndexedSearch(database: $0, log: { Log.warning($0) }) }

        public init(
            synchronous: Bool = false, noAccessTime: Bool = false, strictAccessTime: Bool = false, noDirectoryAccessTime: Bool = false,
            noLinkRewriting: Bool = false
        ) {
            self.noLinkRewriting = noLinkRewriting
            self.synchronous = synchronous
            self.noAccessTime = noAccessTime
            self.strictAccessTime = strictAccessTime
            self.noDirectoryAccessTime = noDirectoryAccessTime
        }
    }

    let options: Options
    private let databasePath: String?
    private let databaseBox: Mutex<RecordDatabase?>
    let state = Mutex(FileSystemState())
    /// Called when the last writable handle of a file whose bytes changed since its last fsync
    /// closes (``onWriterClosed(_:)``); guarded by its own mutex, called with no lock held.
    let writerClosedHandlers = Mutex<[@Sendable () -> Void]>([])
    /// Store changes not yet applied to the listings (filled by the store observer).
    let pendingChanges = Mutex<[RecordStoreChange]>([])
    /// Kernel notifications waiting for the notification thread, and how many were ever queued.
    let outbox = Mutex<(items: [Invalidation], queued: UInt64)>(([], 0))
    /// How many of the queued notifications the notification thread has sent (or found no
    /// session for): a handler waits on it for what it queued (``waitForNotifications(within:)``).
    let notificationsSent = ConditionLock<UInt64>(0)
    /// The notification thread (`NotesFileSystem+Notifications.swift`): woken when the outbox
    /// fills or an outside change arrives, else every half second; started by `initialize`.
    let notifications = BackgroundWorker(name: "notesfs.invalidate", interval: .milliseconds(500))
    /// The thread that prunes note history (``startPruning()``).
    let pruning = BackgroundWorker(name: "notesfs.prune", interval: NotesFileSystem.pruneInterval)
    /// How many page-cache stores have ended (``endStore(_:_:)``): what an open or a truncate
    /// waiting for a store of its inode waits on (``lockedOutsideStore(_:when:_:)``). A leaf lock.
    let storesEnded = ConditionLock<UInt64>(0)
    let notifierBox = Mutex<Notifier?>(nil)
    let mountTime = FileTime.now
    /// The read-only trees at the root (`NotesFileSystem+Virtual.swift`); a tree's number in
    /// ``VirtualNodeTable`` is its index here.
    let virtualTrees: [any VirtualTree] = [RecentNotes(), SearchResults(), NoteHistory(), Backlinks(), Tags(), QueryResults()]
    /// The search `.search` asks (``Options/search``), set with the database; a leaf lock.
    let searchBox = Mutex<(any NoteSearching)?>(nil)

    /// A filesystem over an open database (tests, in-process mounts).
    public init(database: RecordDatabase, options: Options = Options()) {
        self.options = options
        databasePath = nil
        databaseBox = Mutex(database)
        observe(database)
    }

    /// A filesystem over the database at `path`, opened by ``openDatabase()`` (in the daemon, after
    /// the fork, so the store's threads live there; before the mount, so a failure leaves none).
    public init(databasePath: String, options: Options = Options()) {
        self.options = options
        self.databasePath = databasePath
        databaseBox = Mutex(nil)
    }

    /// Opens the database given to ``init(databasePath:options:)``, if not open yet.
    /// - Throws: the store's error (not a database, newer format, I/O).
    public func openDatabase() throws(RecordStoreError) {
        guard databaseBox.withLock({ $0 == nil }), let databasePath else { return }
        let database = try RecordDatabase(path: databasePath, create: false)
        if database.isReadOnly {
            Log.warning("\(databasePath): no write access to the database here; serving it read-only (changes fail with EROFS)")
        }
        databaseBox.withLock { $0 = database }
        observe(database)
    }

    /// Whether the open database may only be read here (then every change fails with `EROFS`).
    public var isReadOnly: Bool { databaseBox.withLock { $0?.isReadOnly ?? false } }

    /// The open database. Set before the kernel's first request: by `init(database:)`, or by
    /// ``openDatabase()`` (`Session.serve` runs it before mounting; `initialize` exits when it
    /// cannot open it), so no request reaches the unwrap with nil.
    var database: RecordDatabase { databaseBox.withLock { $0! } }

    public var implementsReaddirplus: Bool { true }

    private func observe(_ database: RecordDatabase) {
        searchBox.withLock { $0 = options.search(database) }
        // Note history: every save and delete through the mount keeps the version it replaces
        // (coalesced), in the same commit. A hook installed already (tests' settings) is kept.
        if database.installedCommitHook == nil { VersionHistory.install(on: database) }
        database.addObserver { [weak self] change in
            guard let self else { return }
            pendingChanges.withLock { $0.append(change) }
            if change.isExternal { notifications.wake() }
        }
    }

    public func initialize(connection: inout ConnectionInfo, notifier: Notifier) {
        do { try openDatabase() } catch {
            Log.error("cannot open the database \(databasePath ?? ""): \(error)")
            exit(1)
        }
        // Pages are dropped by explicit invalidation (outside changes) and by opens without
        // `keep_cache` (a changed record), not because a refreshed mtime differs from the cached
        // one: that would drop the pages this mount wrote or stored for its own saves. A size
        // change still drops them (no `explicitInvalidateData`).
        connection.want.remove(.autoInvalidateData)
        // ACLs kept as attributes, enforced and cached by the kernel (NotesFileSystem+ACL.swift).
        connection.want.insert([.posixACL, .dontMask])
        notifierBox.withLock { $0 = notifier }
        notifications.start { [weak self] worker in self?.runNotifications(worker) }
        startPruning()
    }

    /// How long unmount waits for the notification thread to end (it may be sending a
    /// notification, or saving a file again, when it is stopped).
    static let notificationStopLimit: Duration = .seconds(5)

    public func destroy() {
        guard databaseBox.withLock({ $0 != nil }) else { return }
        // A prune under way ends first: no commit of it follows the store's close.
        pruning.stop()
        pruning.join()
        notifications.stop()
        let failures = flushAll()
        if failures > 0 { Log.error("\(failures) files could not be saved at unmount") }
        do { try database.close() } catch { Log.error("store sync at unmount: \(error)") }
        if !notifications.join(until: .now + Self.notificationStopLimit) {
            Log.warning("the notification thread did not end within \(Self.notificationStopLimit) of the unmount")
        }
    }

    /// Runs `body` under the lock after applying pending store changes; maps errors to errno.
    /// In debug builds, checks the state's invariants after it (``FileSystemState/checkInvariants(after:)``).
    func locked<T: Sendable>(
        _ body: (inout FileSystemState) throws -> T, function: StaticString = #function
    ) throws(Errno) -> T {
        let result: Result<T, Errno> = state.withLock { state in
            applyPendingChanges(&state)
            let result: Result<T, Errno>
            do {
                let value = try body(&state)
                applyPendingChanges(&state)
                result = .success(value)
            } catch {
                applyPendingChanges(&state)
                result = .failure(ErrnoMapping.errno(for: error))
            }
            state.checkInvariants(after: "\(function)")
            return result
        }
        return try result.get()
    }

    /// Queues `items` for the notification thread, which sends them after the current request's
    /// reply (never from a request handler: FUSE-NOTES.md). Takes only the `outbox` leaf lock, so
    /// it may be called holding the state lock.
    func notifyKernel(_ items: [Invalidation]) {
        outbox.withLock { outbox in
            outbox.items += items
            outbox.queued += UInt64(items.count)
        }
        notifications.wake()
    }

    /// Waits, holding no lock, until the notification thread has sent every notification queued
    /// so far, or `limit` has passed: for a handler that changed other files than those the
    /// request names (a tag rename rewrites notes). Sent after the reply, an invalidation of such
    /// a file could land in the middle of a read made right after it, and the kernel then kept
    /// the file's old size over its new bytes. Bounded: a notification about a directory that
    /// this request holds locked in the kernel waits for the reply.
    func waitForNotifications(within limit: Duration) {
        let queued = outbox.withLock { $0.queued }
        _ = notificationsSent.wait(until: .now + limit) { $0 >= queued ? true : nil }
    }
}

/// What the kernel must be told after a change.
enum Invalidation: Sendable {
    case entry(parent: Inode, name: String)
    /// Drop the inode's cached pages and attributes.
    case inode(Inode)
    /// Drop only the inode's cached attributes (its ctime or link count moved, not its bytes).
    case attributes(Inode)
    case delete(parent: Inode, child: Inode, name: String)
    /// Put a saved file's bytes (the record at change tag `tag`) into the kernel's page cache.
    case store(Inode, tag: String, bytes: [UInt8])
}

/// One entry of a directory snapshot.
struct DirectorySnapshotEntry {
    var name: String
    var inode: Inode
    var mode: mode_t
}

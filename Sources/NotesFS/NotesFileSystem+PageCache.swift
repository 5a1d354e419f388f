import FUSE
import Foundation
import Notes
import RecordStore

/// Priming the kernel's page cache with a file's bytes after this mount saved it, so that the
/// next read of it is answered by the kernel (`fuse_lowlevel_notify_store`); and, with `-o noatime`,
/// with a note's bytes at its first open since the mount (``storePagesForOpen(_:)``).
///
/// Without it the first read after a write is a round trip: the kernel keeps the pages a write
/// filled completely but not a partly written last page (all of a note of 1-4 KB).
///
/// Why a stored page is never stale:
/// - A store is queued when the last writable handle of a file is released and its buffer is
///   clean (its bytes are the record's at change tag `tag`); it holds at most
///   ``storeFileLimit`` bytes, and the outbox at most ``storeQueueLimit`` bytes of stores (more
///   are not queued: those files are read from the daemon, as before).
/// - The notification thread sends it only if, under the state lock, the record still has that
///   tag, no buffer or scratch file exists for the inode (no writable handle, nothing dirty) and
///   no reader has it open; it then marks the inode `storing`.
/// - The kernel changes a file's pages itself only after asking the daemon: writes need a
///   writable open, truncation a setattr. Writable opens and truncates of a `storing` inode wait
///   until the store is sent (``lockedOutsideStore(_:_:)``), so no write can land in a page the
///   store then overwrites.
/// - After the store, under the lock again: if the tag moved or a buffer appeared meanwhile (an
///   outside commit, a wait that gave up), the inode's pages are invalidated, after the store.
///   Outside changes are invalidated by the same thread, so always after a store queued before.
extension NotesFileSystem {
    /// The largest file whose bytes are stored (one in-memory buffer, ``ContentBuffer/memoryLimit``).
    static let storeFileLimit = ContentBuffer.memoryLimit
    /// Bytes of stores the outbox may hold at once.
    static let storeQueueLimit = 8 << 20
    /// How long a writable open or a truncate waits for a store of its inode before it goes on
    /// (the store is then invalidated after it is sent). Stores take microseconds; this bounds a
    /// wait on a kernel page lock that only a free request thread could release.
    static let storeWaitLimit: Duration = .seconds(2)

    /// Queues a store of `open`'s bytes, if it may be stored (under the state lock; after the
    /// last writable handle was released and the buffer dropped).
    func queueStore(_ inode: Inode, _ open: OpenFile, _ state: inout FileSystemState) {
        guard !open.dirty, !open.orphaned, !open.content.isSpilled, let tag = open.baseTag,
            isStorable(inode, tag: tag, state)
        else { return }
        let count = open.content.count
        guard count > 0, count <= Int64(Self.storeFileLimit), state.pageCache.queuedStoreBytes + Int(count) <= Self.storeQueueLimit,
            let bytes = try? open.content.bytes(upTo: Self.storeFileLimit)
        else { return }
        state.pageCache.queuedStoreBytes += bytes.count
        notifyKernel([.store(inode, tag: tag, bytes: bytes)])
    }

    /// Whether the kernel may hold `tag`'s bytes as `inode`'s pages: the record has that tag and
    /// no buffer, scratch file or rename alias stands for the inode.
    func isStorable(_ inode: Inode, tag: String, _ state: borrowing FileSystemState) -> Bool {
        state.files.open[inode] == nil && state.scratchFiles.files[inode] == nil && state.names.aliases[inode] == nil
            && database.metadata(identity: inode)?.recordChangeTag == tag
    }

    /// Sends a queued store (on the notification thread, holding no lock while it is sent).
    func store(_ inode: Inode, tag: String, bytes: [UInt8], _ notifier: Notifier) {
        let send: Bool = state.withLock { state in
            applyPendingChanges(&state)
            state.pageCache.queuedStoreBytes -= bytes.count
            guard state.files.readers[inode] == nil, isStorable(inode, tag: tag, state) else { return false }
            state.beginStore(inode)
            return true
        }
        guard send else { return }
        do { try notifier.store(inode, offset: 0, bytes: bytes) } catch {
            Log.debug("inode \(inode): page-cache store failed (\(error))")
        }
        let stale: Bool = state.withLock { state in
            endStore(inode, &state)
            applyPendingChanges(&state)
            return !isStorable(inode, tag: tag, state)
        }
        if stale { try? notifier.invalidateInode(inode) }
    }

    /// The largest note a read-only open stores (the kernel's first read of a file asks for up to
    /// 128 KiB, its `max_readahead`, anyway).
    static let storeAtOpenLimit = 128 << 10

    /// What a read-only open found under the lock: the note to store.
    private struct OpenStore: Sendable {
        var recordID: RecordID
        var tag: String
    }

    /// For a read-only open, with `-o noatime`, of a text note that no one has open and whose pages
    /// the kernel cannot hold (``InodeCaches/mayHoldPages(_:)``: no open since the mount): puts the
    /// note's bytes in the kernel's page cache before the open is answered, so that reading it
    /// costs no `read` round trip (a cold `cat` is then two round trips, open and release, not
    /// three). Returns the change tag of the bytes stored, nil when nothing was; `open` answers
    /// with `keep_cache` only if the record still has that tag and nothing else holds the inode
    /// (checked under the lock where it registers the open), else the kernel drops the pages.
    /// (Without noatime the first read moves the atime, and the kernel asks for the new one only
    /// after a `read` reached the daemon: a store would leave `stat` showing the old one.)
    ///
    /// Why the store cannot wait on the kernel, even with one request thread (`-s`): it waits only
    /// for page locks of this inode, and only a `read` or `write` of an open file holds them while
    /// it waits for the daemon. No handle of the inode is open (no reader, no buffer), and until
    /// the store is sent the inode is `storing`: other opens and truncates of it wait
    /// (``lockedOutsideStore(_:when:_:)``).
    func storePagesForOpen(_ inode: Inode) throws(Errno) -> String? {
        guard let notifier = notifierBox.withLock({ $0 }) else { return nil }
        let plan: OpenStore? = try lockedOutsideStore(inode) { (state) throws in
            guard state.files.readers[inode] == nil, !state.pageCache.inodeCaches.mayHoldPages(inode),
                case .note(let m) = try node(inode, state),
                m.field(FieldName.content) == nil, let tag = m.recordChangeTag, let count = m.byteCount(of: FieldName.text), count > 0,
                count <= Self.storeAtOpenLimit, isStorable(inode, tag: tag, state)
            else { return nil }
            state.beginStore(inode)
            return OpenStore(recordID: m.recordID, tag: tag)
        }
        guard let plan else { return nil }
        defer { state.withLock { endStore(inode, &$0) } }
        guard let record = try? database.record(for: plan.recordID), record.recordChangeTag == plan.tag,
            record[FieldName.content] == nil, let text = record[FieldName.text]?.stringValue
        else { return nil }
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.storeAtOpenLimit else { return nil }
        do { try notifier.store(inode, offset: 0, bytes: bytes) } catch {
            Log.debug("inode \(inode): page-cache store at open failed (\(error))")
            return nil
        }
        return plan.tag
    }

    /// Ends a page-cache store of `inode` (under the state lock) and wakes the opens and
    /// truncates waiting for it (``lockedOutsideStore(_:when:_:)``).
    func endStore(_ inode: Inode, _ state: inout FileSystemState) {
        state.endStore(inode)
        storesEnded.withLock { $0 &+= 1 }
    }

    /// What a gated body returned: its value, or that a store of the inode is in flight (with
    /// the count of stores ended so far, to wait for the next).
    private enum Gated<T: Sendable>: Sendable {
        case busy(endedStores: UInt64)
        case done(T)
    }

    /// ``locked(_:)`` for an operation that lets the kernel change `inode`'s pages (a writable
    /// open, a truncate): runs `body` only while no store of `inode` is in flight, waiting for one
    /// to end (at most ``storeWaitLimit``). Past the limit it runs anyway; the store is then
    /// invalidated. With `gated` false it is ``locked(_:)``.
    ///
    /// The wait is on ``storesEnded``, with no other lock held: its count is read under the state
    /// lock, where every store also ends, so an end after the check always wakes the waiter.
    func lockedOutsideStore<T: Sendable>(
        _ inode: Inode, when gated: Bool = true, _ body: (inout FileSystemState) throws -> T
    ) throws(Errno) -> T {
        let deadline = ContinuousClock.now + Self.storeWaitLimit
        while true {
            let result: Gated<T> = try locked { (state) throws in
                if gated, state.pageCache.storing[inode] != nil, ContinuousClock.now < deadline {
                    return .busy(endedStores: storesEnded.read { $0 })
                }
                return .done(try body(&state))
            }
            switch result {
            case .done(let value): return value
            case .busy(let ended): _ = storesEnded.wait(until: deadline) { $0 != ended ? () : nil }
            }
        }
    }
}

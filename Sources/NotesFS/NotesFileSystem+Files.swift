import FUSE
import Foundation
import Notes
import RecordStore

/// Regular files: create, open, read, write, flush (the save), release, fsync, unlink.
extension NotesFileSystem {
    /// The open buffer of `inode`, loading it from the store on first use (under the state lock:
    /// for paths that already hold it; handlers use ``openFileLoading(_:)``).
    func openFile(_ inode: Inode, _ state: inout FileSystemState) throws -> OpenFile {
        if let open = state.files.open[inode] { return open }
        let node = try self.node(inode, state)
        let open: OpenFile
        switch node {
        case .scratch(let file): open = OpenFile(content: file.content, baseTag: nil)
        case .root, .recovered, .folder: throw Errno.isDirectory
        case .symlink, .special, .link: throw Errno.invalidArgument  // the kernel opens these itself
        case .note(let m), .attachment(let m):
            open = OpenFile(content: try loadContent(node), baseTag: m.recordChangeTag)
        }
        state.files.open[inode] = open
        return open
    }

    /// What ``openFileLoading(_:)`` found under the lock.
    private enum LoadStep: Sendable {
        case open(OpenFile)
        case load(Node, tag: String?)
    }

    /// The open buffer of `inode`; a stored file's bytes are loaded (an asset copied) outside the
    /// state lock, then installed under it if the record did not change meanwhile (else loaded again).
    /// Waits for a page-cache store of `inode` in flight (the buffer is for writing or truncating).
    /// - Throws: `EISDIR`, `ENOENT`, the store's errors; `EAGAIN` if the record kept changing.
    func openFileLoading(_ inode: Inode) throws(Errno) -> OpenFile {
        for _ in 0..<8 {
            let step: LoadStep = try lockedOutsideStore(inode) { (state) throws in
                if let open = state.files.open[inode] { return .open(open) }
                let node = try self.node(inode, state)
                if case .scratch = node { return .open(try openFile(inode, &state)) }
                return .load(node, tag: node.metadata?.recordChangeTag)
            }
            guard case .load(let node, let tag) = step else {
                if case .open(let open) = step { return open }
                continue
            }
            let content: ContentBuffer
            do { content = try loadContent(node) } catch { throw ErrnoMapping.errno(for: error) }
            let installed: OpenFile? = try lockedOutsideStore(inode) { (state) throws in
                if let open = state.files.open[inode] { return open }
                guard try self.node(inode, state).metadata?.recordChangeTag == tag else { return nil }
                let open = OpenFile(content: content, baseTag: tag)
                state.files.open[inode] = open
                return open
            }
            if let installed { return installed }
        }
        throw Errno.tryAgain
    }

    /// What a save captured under the state lock, to stream outside it.
    private struct SavePlan: Sendable {
        enum Target: Sendable {
            case pending(ScratchFile)
            case record(identity: UInt64)
        }
        var target: Target
        var recordType: String
        var content: ContentBuffer
        var generation: UInt64
    }

    /// Saves `inode`'s dirty buffer as one record save without holding the state lock while the
    /// bytes are hashed and copied: the plan is taken under the lock, the asset (or text) is made
    /// outside it, and the commit checks under the lock that the record still has the change tag
    /// the bytes were loaded from. Concurrent operations on the same file wait on its
    /// ``OpenFile/operationLock``.
    /// - Throws: `ESTALE` when the record changed elsewhere, `EIO`/`ENOSPC` when the store cannot
    ///   write. The bytes stay in the buffer on failure.
    func saveFile(_ inode: Inode) throws(Errno) {
        guard let open = try locked({ state in state.files.open[inode] }) else { return }
        open.operationLock.lock()
        defer { open.operationLock.unlock() }
        try saveHoldingOperationLock(inode, open)
    }

    /// ``saveFile(_:)`` for a caller that holds `open.operationLock`.
    func saveHoldingOperationLock(_ inode: Inode, _ open: OpenFile) throws(Errno) {
        let plan: SavePlan? = try locked { (state) throws in
            guard state.files.open[inode] === open, open.dirty else { return nil }
            if let file = state.scratchFiles.files[inode], file.isPendingRecord, !file.isUnnamed, !open.orphaned {
                let type = EntryNames.isNoteFileName(file.name) ? Note.recordType : Attachment.recordType
                return SavePlan(target: .pending(file), recordType: type, content: open.content, generation: open.generation)
            }
            if state.scratchFiles.files[inode] != nil || open.orphaned {
                open.dirty = false
                return nil
            }
            guard let metadata = database.metadata(identity: state.names.aliases[inode] ?? inode) else {
                open.orphaned = true
                open.dirty = false
                return nil
            }
            guard metadata.recordChangeTag == open.baseTag else {
                Log.warning("\(metadata.recordID): changed by someone else while open here; keeping this file's bytes unsaved")
                throw Errno.stale
            }
            return SavePlan(
                target: .record(identity: metadata.identity), recordType: metadata.recordType, content: open.content,
                generation: open.generation)
        }
        guard let plan else { return }
        let bytes: StoredBytes
        do { bytes = try storedBytes(of: plan.content, recordType: plan.recordType) } catch {
            Log.error("inode \(inode): could not store its bytes: \(error)")
            throw ErrnoMapping.errno(for: error)
        }
        try locked { (state) throws in
            // The inode may have been renamed, retyped or replaced meanwhile: then save as before,
            // under the lock.
            guard state.files.open[inode] === open, open.content === plan.content, open.dirty else { return }
            switch plan.target {
            case .pending(let file):
                let type = EntryNames.isNoteFileName(file.name) ? Note.recordType : Attachment.recordType
                guard state.scratchFiles.files[inode] === file, file.isPendingRecord, !open.orphaned, type == plan.recordType else {
                    try save(inode, &state)
                    return
                }
                try savePending(file, &state, bytes: bytes, generation: plan.generation)
            case .record(let identity):
                guard let metadata = database.metadata(identity: state.names.aliases[inode] ?? inode), metadata.identity == identity,
                    metadata.recordType == plan.recordType
                else {
                    try save(inode, &state)
                    return
                }
                try commit(inode, open, metadata, bytes, generation: plan.generation, &state)
            }
        }
    }

    /// Saves a dirty buffer as one record save with the change tag it was loaded from, under the
    /// state lock (unmount, mknod, rename: the bytes are streamed while holding it).
    /// - Throws: `ESTALE` when the note changed elsewhere, `EIO`/`ENOSPC` when the store cannot
    ///   write. The bytes stay in the buffer on failure.
    func save(_ inode: Inode, _ state: inout FileSystemState) throws {
        guard let open = state.files.open[inode], open.dirty else { return }
        if let file = state.scratchFiles.files[inode], file.isPendingRecord, !file.isUnnamed, !open.orphaned {
            try savePending(file, &state)
            return
        }
        if state.scratchFiles.files[inode] != nil || open.orphaned {
            open.dirty = false
            return
        }
        guard let metadata = database.metadata(identity: state.names.aliases[inode] ?? inode) else {
            open.orphaned = true
            open.dirty = false
            return
        }
        let bytes = try storedBytes(of: open.content, recordType: metadata.recordType)
        try commit(inode, open, metadata, bytes, generation: open.generation, &state)
    }

    /// Commits `bytes` as the content of the record `metadata` (under the state lock).
    /// - Throws: `ESTALE` when the record's change tag is not the one the buffer was loaded from.
    private func commit(
        _ inode: Inode, _ open: OpenFile, _ metadata: RecordMetadata, _ bytes: StoredBytes, generation: UInt64,
        _ state: inout FileSystemState
    ) throws {
        guard metadata.recordChangeTag == open.baseTag else {
            Log.warning("\(metadata.recordID): changed by someone else while open here; keeping this file's bytes unsaved")
            throw Errno.stale
        }
        var record = metadata.record  // partial: what the bytes do not replace is kept as stored
        bytes.apply(to: &record)
        if let time = open.pendingModificationTime {
            Self.setModificationTime(time, of: &record)
        } else {
            record[MountFields.modificationNanoseconds] = nil
        }
        Self.stampChange(&record, inode: inode, &state)
        let saved = try saveOne(record)
        open.baseTag = saved.recordChangeTag
        if open.generation == generation { open.dirty = false }
        open.pendingModificationTime = nil
        state.pageCache.inodeCaches[cachedTag: inode] = saved.recordChangeTag
        if options.synchronous { try database.sync() }
    }

    /// Saves a new file as its first record, under the identity reserved at create (under the
    /// state lock). `bytes` is its stored form when already made outside the lock.
    func savePending(_ file: ScratchFile, _ state: inout FileSystemState, bytes: StoredBytes? = nil, generation: UInt64? = nil) throws {
        let saved = try createRecord(
            named: file.name, folder: try folderReference(file.parent, state), from: file, bytes: bytes,
            accessTime: state.pageCache.inodeCaches.removeAccessTime(file.inode), touching: try touchedFolders([file.parent], &state))
        state.scratchFiles.files[file.inode] = nil
        if let open = state.files.open[file.inode] {
            open.baseTag = saved.recordChangeTag
            if generation == nil || open.generation == generation { open.dirty = false }
            open.pendingModificationTime = nil
        }
        state.pageCache.inodeCaches[cachedTag: file.inode] = saved.recordChangeTag
        if options.synchronous { try database.sync() }
    }

    /// A new note or attachment named `name` from a scratch or pending file's bytes (a pending
    /// file keeps its reserved identity). `bytes` is the stored form when already made.
    @discardableResult
    func createRecord(
        named name: String, folder: RecordID?, from file: ScratchFile, deleting: RecordID? = nil, bytes: StoredBytes? = nil,
        accessTime: FileTime? = nil, touching folders: [Record] = []
    ) throws -> Record {
        var record: Record
        let recordType: String
        if EntryNames.isNoteFileName(name) {
            record = Note(title: EntryNames.title(fromFileName: name), folder: folder).record
            recordType = Note.recordType
        } else {
            record = Attachment(name: EntryNames.name(fromFileName: name), content: nil, folder: folder).record
            recordType = Attachment.recordType
        }
        try (bytes ?? storedBytes(of: file.content, recordType: recordType)).apply(to: &record)
        if file.isPendingRecord { record.useReservedIdentity(file.inode) }
        record[MountFields.mode] = .int64(Int64(file.mode & 0o7777))
        record[MountFields.uid] = .int64(Int64(file.uid))
        record[MountFields.gid] = .int64(Int64(file.gid))
        file.extendedAttributes.write(into: &record)
        if !file.isPendingRecord || file.modificationTimeWasSet { Self.setModificationTime(file.modificationTime, of: &record) }
        if let accessTime { record[MountFields.accessNanoseconds] = Self.nanoseconds(accessTime).map { .int64($0) } }
        return try saveOne(record, deleting: deleting.map { [$0] } ?? [], touching: folders)
    }

    /// Saves one record (and deletes `deleting`) in one modify; the saved record.
    /// - Throws: the store's errors; `EIO` if the store reports no saved record.
    /// The inode of a record the store saved (its identity, which every saved record has).
    static func inode(of saved: Record) throws(Errno) -> Inode {
        guard let identity = saved.identity else {
            Log.error("the store saved \(saved.recordID.recordName) without an identity")
            throw .io
        }
        return identity
    }

    func saveOne(_ record: Record, deleting: [RecordID] = [], touching folders: [Record] = [], unchangedSince: ChangeToken? = nil) throws
        -> Record
    {
        guard
            let saved = try database.modify(saving: [record] + folders, deleting: deleting, unchangedSince: unchangedSince).savedRecords
                .first
        else { throw Errno.io }
        return saved
    }

    /// Saves every dirty file (unmount, SIGTERM); returns how many could not be saved.
    func flushAll() -> Int {
        state.withLock { state in
            applyPendingChanges(&state)
            var failures = 0
            for (inode, open) in state.files.open where open.dirty {
                do { try save(inode, &state) } catch {
                    if (error as? Errno) == .stale, saveAsConflictCopy(inode, open, &state) { continue }
                    failures += 1
                    Log.error("inode \(inode): could not save at unmount: \(error)")
                }
            }
            return failures
        }
    }

    /// The record a new entry in `parent` references (nil at the root).
    func folderReference(_ parent: Inode, _ state: borrowing FileSystemState) throws -> RecordID? {
        switch try node(parent, state) {
        case .root: return nil
        case .folder(let m): return m.recordID
        case .recovered: throw Errno.readOnly
        default: throw Errno.notDirectory
        }
    }

    /// Creates a regular file `name` in `parent`: a scratch file, a reattached hidden note, or a new record.
    func createFile(_ context: RequestContext, parent: Inode, name: String, mode: mode_t, _ state: inout FileSystemState) throws -> Inode {
        _ = try folderReference(parent, state)  // ENOTDIR for a file
        try refuseNewEntry(in: parent, state)
        if try listing(parent, &state).names[name] != nil { throw Errno.exists }
        let (permissions, inherited) = newEntryAccess(mode, in: parent, directory: false, context, state)
        if ScratchNames.isScratch(name) {
            let file = ScratchFile(
                inode: state.scratchFiles.nextInode, parent: parent, name: name,
                content: ContentBuffer(spillDirectory: database.temporaryDirectoryPath), mode: permissions,
                uid: context.uid, gid: context.gid)
            file.extendedAttributes = inherited  // a save renamed over a note carries it
            state.scratchFiles.nextInode += 1
            state.scratchFiles.files[file.inode] = file
            state.names.listings[parent]?.upsert(file.inode, scratchMember(file))  // listing(parent) above built it
            return file.inode
        }
        if let inode = state.names.detached[parent]?[name], let metadata = database.metadata(identity: inode) {
            // vim/emacs: the note renamed to a backup name comes back under its name, emptied.
            try reattach(inode, in: parent, name: name, &state)
            // Emptied: a new buffer (the old bytes are not read), or the open one truncated.
            let open: OpenFile
            if let existing = state.files.open[inode] {
                open = existing
                try open.content.truncate(0)
            } else {
                open = OpenFile(content: ContentBuffer(spillDirectory: database.temporaryDirectoryPath), baseTag: nil)
                state.files.open[inode] = open
            }
            open.baseTag = metadata.recordChangeTag
            open.markChanged()
            return inode
        }
        // A new note or attachment: saved at its first flush, under an identity reserved now.
        let file = ScratchFile(
            inode: try database.reserveIdentity(), parent: parent, name: name,
            content: ContentBuffer(spillDirectory: database.temporaryDirectoryPath), mode: permissions,
            uid: context.uid, gid: context.gid)
        file.extendedAttributes = inherited
        file.isPendingRecord = true
        state.scratchFiles.files[file.inode] = file
        state.names.listings[parent]?.upsert(file.inode, scratchMember(file))  // listing(parent) above built it
        let open = OpenFile(content: file.content, baseTag: nil)
        open.markChanged()
        state.files.open[file.inode] = open
        return file.inode
    }

    /// Brings back a record hidden by a rename to a scratch name.
    func reattach(_ inode: Inode, in parent: Inode, name: String, _ state: inout FileSystemState) throws {
        state.names.detached[parent]?[name] = nil
        for file in state.scratchFiles.files.values where file.detachedRecord?.inode == inode { file.detachedRecord = nil }
        if let metadata = database.metadata(identity: inode), let member = member(for: metadata) {
            _ = try listing(parent, &state)
            state.names.listings[parent]?.upsert(inode, member)
            state.names.parentOf[inode] = parent
        }
    }

    public func create(_ context: RequestContext, parent: Inode, name: FileName, mode: mode_t, flags: Int32) throws(Errno) -> (
        Entry, Opened
    ) {
        let string = try validName(name)
        try refuseVirtualChange(in: parent)
        return try locked { (state) throws in
            let inode = try createFile(context, parent: parent, name: string, mode: mode, &state)
            let open = try openFile(inode, &state)
            open.handles += 1
            let handle = state.newHandle()
            state.files.handles[handle] = inode
            state.pageCache.inodeCaches[cachedTag: inode] = open.baseTag
            return (try entry(inode, state), Opened(handle: handle))
        }
    }

    public func mknod(_ context: RequestContext, parent: Inode, name: FileName, mode: mode_t, rdev: UInt64) throws(Errno) -> Entry {
        let string = try validName(name)
        try refuseVirtualChange(in: parent)
        if let type = Self.specialFileType(mode) {
            return try makeSpecialFile(context, parent: parent, name: string, type: type, mode: mode, rdev: rdev)
        }
        guard mode & S_IFMT == S_IFREG else { throw .permissionDenied }
        return try locked { (state) throws in
            let inode = try createFile(context, parent: parent, name: string, mode: mode, &state)
            try save(inode, &state)
            if let open = state.files.open[inode], open.handles == 0, !open.dirty { state.files.open[inode] = nil }
            return try entry(inode, state)
        }
    }

    public func open(_ context: RequestContext, inode: Inode, flags: Int32) throws(Errno) -> Opened {
        let writable = flags & O_ACCMODE != O_RDONLY
        if writable {
            try refuseVirtualChange(of: inode)
            try locked { (state) throws in try refuseWritableOpen(inode, flags: flags, state) }
        }
        if let opened = try openVirtualFile(inode, flags: flags, caller: context) { return opened }
        // Load a stored file's bytes outside the state lock (an asset may be large).
        if writable, flags & O_TRUNC == 0 { _ = try openFileLoading(inode) }
        // With noatime, a note no one opened since the mount: its bytes go to the kernel's pages
        // with the open (without noatime the first read must reach the daemon: it moves the atime,
        // and only a `read` makes the kernel ask for the new one).
        let stored = !writable && options.noAccessTime ? try storePagesForOpen(inode) : nil
        // No open may let the kernel touch pages a page-cache store is filling (NotesFileSystem+PageCache).
        return try lockedOutsideStore(inode) { (state) throws in
            let node = try self.node(inode, state)
            if case .folder = node { throw Errno.isDirectory }
            let handle = state.newHandle()
            state.files.handles[handle] = inode
            if writable {
                if flags & O_TRUNC != 0, state.files.open[inode] == nil, let metadata = node.metadata {
                    // The old bytes are about to go: do not read them.
                    let open = OpenFile(
                        content: ContentBuffer(spillDirectory: database.temporaryDirectoryPath), baseTag: metadata.recordChangeTag)
                    open.markChanged()
                    state.files.open[inode] = open
                }
                try openFile(inode, &state).handles += 1
            } else {
                state.files.readers[inode, default: 0] += 1
            }
            // A read served from the kernel's pages never reaches the daemon: when a read would
            // move the atime, the pages are not kept, so that the read reaches the daemon (which
            // moves it) and the kernel drops its cached atime as the read completes (a `stat`
            // right after sees the new one). An open alone moves nothing, as on ext4 (`lsattr`
            // and `chattr` open files for reading), except for an empty file, whose reads never
            // reach the daemon: its open counts as the read, and the invalidation queued here
            // tells the kernel.
            var movesAccessTime = false
            switch node {
            case .note(let m) where flags & O_ACCMODE != O_WRONLY, .attachment(let m) where flags & O_ACCMODE != O_WRONLY:
                movesAccessTime = readMovesAccessTime(inode, m, state)
                let storedSize = m.field(FieldName.content)?.assetValue?.size ?? Int64(m.byteCount(of: FieldName.text) ?? 0)
                let isEmpty = state.files.open[inode].map { $0.content.count == 0 } ?? (storedSize == 0)
                if movesAccessTime, isEmpty {
                    noteRead(inode, m, &state)
                    notifyKernel([.attributes(inode)])
                }
            default: break
            }
            // Keep the kernel's pages while the record is unchanged since they were cached, or
            // stored just now.
            let tag = node.metadata?.recordChangeTag
            let cached = tag != nil && state.pageCache.inodeCaches[cachedTag: inode] == tag && state.files.open[inode]?.dirty != true
            let keep = !movesAccessTime && (cached || stored.map { $0 == tag && isStorable(inode, tag: $0, state) } == true)
            state.pageCache.inodeCaches[cachedTag: inode] = tag
            // A read-only open has nothing to save at close: no flush round trip.
            var opened = Opened(handle: handle, keepCache: keep)
            opened.noFlush = !writable
            return opened
        }
    }

    /// Where a read finds the bytes (decided under the state lock, read outside it).
    private enum ReadSource: Sendable {
        case buffer(ContentBuffer)
        case bytes([UInt8])
        case asset(path: String, size: Int64)
        case text(RecordID)
    }

    /// Text notes read by open handles are cached (one record read per note, not per read
    /// request); the cache holds at most this many bytes in all (each text is at most
    /// `Note.maxInlineTextBytes`).
    static let readCacheLimit = 32 << 20

    public func read(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, size: Int) throws(Errno) -> [UInt8] {
        guard offset >= 0, size >= 0 else { throw .invalidArgument }
        if let bytes = try readVirtualFile(inode, handle: handle, offset: offset, size: size) { return bytes }
        let source: ReadSource = try locked { (state) throws in
            if let open = state.files.open[inode] {
                // An unlinked file still open has no node: its buffer is all there is.
                switch try? node(inode, state) {
                case .note(let m), .attachment(let m): noteRead(inode, m, &state)
                default: break
                }
                return .buffer(open.content)
            }
            let node = try node(inode, state)
            switch node {
            case .scratch(let file): return .buffer(file.content)
            case .root, .recovered, .folder: throw Errno.isDirectory
            case .symlink, .special, .link: throw Errno.invalidArgument  // the kernel opens these itself
            case .note(let m), .attachment(let m):
                noteRead(inode, m, &state)
                if let asset = m.field(FieldName.content)?.assetValue { return .asset(path: database.assetPath(asset), size: asset.size) }
                if case .attachment = node { return .bytes([]) }
                if let cached = state.files.readCache[inode], cached.tag == m.recordChangeTag {
                    return .bytes(Self.slice(cached.bytes, offset: offset, size: size))
                }
                return .text(m.recordID)
            }
        }
        switch source {
        case .buffer(let buffer): return try buffer.read(offset: offset, size: size)
        case .bytes(let bytes): return bytes
        case .asset(let path, let count): return try Self.readFile(path, count: count, offset: offset, size: size)
        case .text(let recordID):
            let record: Record
            do { record = try database.record(for: recordID) } catch { throw ErrnoMapping.errno(for: error) }
            if let asset = record[FieldName.content]?.assetValue {
                return try Self.readFile(database.assetPath(asset), count: asset.size, offset: offset, size: size)
            }
            let bytes = Array((record[FieldName.text]?.stringValue ?? "").utf8)
            if let tag = record.recordChangeTag, bytes.count <= Note.maxInlineTextBytes {
                // Kept while a reader has the file open, so that reading it in chunks reads the record once.
                try locked { state in
                    guard state.files.readers[inode] != nil else { return }
                    var total = state.files.readCache.values.reduce(0) { $0 + $1.bytes.count }
                    while total + bytes.count > Self.readCacheLimit, let victim = state.files.readCache.first {
                        total -= victim.value.bytes.count
                        state.files.readCache[victim.key] = nil
                    }
                    state.files.readCache[inode] = (tag, bytes)
                }
            }
            return Self.slice(bytes, offset: offset, size: size)
        }
    }

    /// `bytes[offset..<offset+size]`, clamped to the array (no overflow for any offset and size).
    static func slice(_ bytes: [UInt8], offset: Int64, size: Int) -> [UInt8] {
        guard offset >= 0, offset < Int64(bytes.count), size > 0 else { return [] }
        let start = Int(offset)
        return Array(bytes[start..<start + min(size, bytes.count - start)])
    }

    /// Up to `size` bytes at `offset` of the file at `path` (an asset of `count` bytes), by `pread`:
    /// no more than `size` bytes are held. A file shorter than `count` reads as zeros to `count`.
    /// - Throws: the `open`/`pread` errno.
    static func readFile(_ path: String, count: Int64, offset: Int64, size: Int) throws(Errno) -> [UInt8] {
        guard offset < count, size > 0 else { return [] }
        let length = Int(min(Int64(size), count - offset))
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Errno.current }
        defer { Glibc.close(fd) }
        var bytes = [UInt8](repeating: 0, count: length)
        _ = try ContentBuffer.readFully(fd, into: &bytes, at: offset)
        return bytes
    }

    public func write(
        _ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, data: UnsafeRawBufferPointer, flags: Int32
    ) throws(Errno) -> Int {
        guard offset >= 0 else { throw .invalidArgument }
        guard offset <= ContentBuffer.maximumSize - Int64(data.count) else { throw .fileTooLarge }
        let open: OpenFile = try locked { (state) throws in
            guard state.files.handles[handle] == inode, let open = state.files.open[inode] else { throw Errno.badFileDescriptor }
            try refuse(inode, ifFlagged: .immutable, state)  // a descriptor opened before `chattr +i`
            // Append-only: nothing before the end (a descriptor whose O_APPEND was cleared by fcntl).
            if offset < Int64(open.content.count), inodeFlags(inode, state).contains(.appendOnly) { throw Errno.permissionDenied }
            return open
        }
        // The bytes are written outside the state lock; writes to one file are serialised.
        open.operationLock.lock()
        defer { open.operationLock.unlock() }
        let content: ContentBuffer = try locked { (state) throws in
            guard state.files.handles[handle] == inode, state.files.open[inode] === open else { throw Errno.badFileDescriptor }
            open.markChanged()
            // A write moves mtime (saved with the bytes; ctime with it).
            if let file = state.scratchFiles.files[inode] { file.modificationTime = .now } else { open.pendingModificationTime = .now }
            return open.content
        }
        let position = flags & O_APPEND != 0 ? content.count : offset
        try content.write(offset: position, data)
        return data.count
    }

    public func flush(_ context: RequestContext, inode: Inode, handle: UInt64) throws(Errno) {
        try saveFile(inode)
    }

    public func fsync(_ context: RequestContext, inode: Inode, handle: UInt64, dataOnly: Bool) throws(Errno) {
        let (open, generation) = try locked { state in (state.files.open[inode], state.files.open[inode]?.generation) }
        try saveFile(inode)
        do { try database.sync() } catch { throw ErrnoMapping.errno(for: error) }
        // What was saved is final (the writer asked for it), unless a write came in meanwhile.
        let released: Bool = try locked { _ in
            guard let open, open.generation == generation, open.changedSinceFsync else { return false }
            open.changedSinceFsync = false
            return true
        }
        // The sync the save woke may have run before the flag was cleared and held the file back:
        // wake it again, as a writer's close does.
        if released { for handler in writerClosedHandlers.withLock({ $0 }) { handler() } }
    }

    /// The records open for writing here whose bytes changed since their last `fsync`: a save
    /// made by another handle's close (a process that inherited the descriptor and exec'd) is
    /// not what the writer means to keep yet, so a sync does not push them until the writer closes
    /// or fsyncs (``Sync/SyncEngine/deferredRecords``).
    public func recordsBeingWritten() -> Set<String> {
        state.withLock { state in
            var names = Set<String>()
            for (inode, open) in state.files.open where open.handles > 0 && open.changedSinceFsync && !open.orphaned {
                if let metadata = database.metadata(identity: state.names.aliases[inode] ?? inode) {
                    names.insert(metadata.recordID.recordName)
                }
            }
            return names
        }
    }

    public func release(_ context: RequestContext, inode: Inode, handle: UInt64, flags: Int32) throws(Errno) {
        if releaseVirtualFile(inode, handle: handle) { return }
        var writerClosed = false
        defer { if writerClosed { for handler in writerClosedHandlers.withLock({ $0 }) { handler() } } }
        let unsaved: OpenFile? = try locked { (state) throws in
            state.files.handles[handle] = nil
            if flags & O_ACCMODE == O_RDONLY, let open = state.files.open[inode], open.orphaned, open.handles <= 0,
                !state.files.handles.values.contains(inode)
            {
                state.files.open[inode] = nil  // the last reader of an unlinked file
            }
            if flags & O_ACCMODE == O_RDONLY {
                let remaining = (state.files.readers[inode] ?? 1) - 1
                if remaining <= 0 {
                    state.files.readers[inode] = nil
                    state.files.readCache[inode] = nil
                } else {
                    state.files.readers[inode] = remaining
                }
            }
            guard flags & O_ACCMODE != O_RDONLY, let open = state.files.open[inode] else { return nil }
            open.handles -= 1
            guard open.handles <= 0 else { return nil }
            writerClosed = open.changedSinceFsync
            open.changedSinceFsync = false
            if let file = state.scratchFiles.files[inode], file.isUnnamed, !state.files.handles.values.contains(inode) {
                // An O_TMPFILE file closed without a name: gone.
                state.scratchFiles.files[inode] = nil
                state.files.open[inode] = nil
                return nil
            }
            if open.dirty && !open.orphaned { return open }
            state.files.open[inode] = nil
            queueStore(inode, open, &state)
            return nil
        }
        guard let open = unsaved else { return }
        do { try saveAndDrop(inode, open) } catch {
            Log.error("inode \(inode): save failed at close (\(error)); the bytes stay in memory and the save is tried again")
            try locked { state in _ = state.files.failedSaves.insert(inode) }
        }
    }

    /// Saves the dirty buffer `open` of `inode`, which no handle has open any more, and drops
    /// it; a save refused because the record changed elsewhere keeps the bytes as a conflict
    /// copy (NotesFileSystem+ConflictCopy).
    /// - Throws: the save's errno when the bytes stay in the buffer.
    func saveAndDrop(_ inode: Inode, _ open: OpenFile) throws(Errno) {
        do { try saveFile(inode) } catch {
            if error == .stale, try locked({ state in open.handles <= 0 && saveAsConflictCopy(inode, open, &state) }) { return }
            throw error
        }
        try locked { state in dropSavedBuffer(inode, open, &state) }
    }

    /// After `open` (the buffer of `inode`) was saved with no handle left: drops it, unless a new
    /// handle opened it meanwhile, and queues its page-cache store.
    func dropSavedBuffer(_ inode: Inode, _ open: OpenFile, _ state: inout FileSystemState) {
        guard state.files.open[inode] === open, open.handles <= 0, !open.dirty else { return }
        state.files.open[inode] = nil
        queueStore(inode, open, &state)
    }

    public func unlink(_ context: RequestContext, parent: Inode, name: FileName) throws(Errno) {
        let string = try validName(name)
        try refuseVirtualChange(in: parent, name: name)
        // A file still open keeps its bytes after the unlink: load them now, outside the state lock.
        let openElsewhere: Inode? = try locked { state in
            guard let inode = try? child(parent, string, &state), state.files.open[inode] == nil,
                state.files.handles.values.contains(inode)
            else { return nil }
            return inode
        }
        if let openElsewhere { _ = try? openFileLoading(openElsewhere) }
        try locked { (state) throws in
            try resolvingAgain(&state) { (state) throws in
                let inode = try listedChild(parent, string, &state)
                try refuseRemoval(of: inode, from: parent, state)
                let node = try node(inode, state)
                if let metadata = node.metadata { try refuseStaleName(inode, metadata, in: parent, &state) }
                switch node {
                case .root, .recovered, .folder: throw Errno.isDirectory
                case .scratch(let file):
                    try removeScratch(file, &state)
                case .link(let m):
                    // The file's other names show its new ctime and link count (``linkTarget(of:_:)``).
                    try database.modify(
                        saving: (linkTarget(of: m, &state).map { [$0] } ?? []) + (try touchedFolders([parent], &state)),
                        deleting: [m.recordID], deleteConditions: Self.unchanged(m))
                case .symlink(let m), .special(let m):
                    // Another name (a hard link) takes the record over, or it goes.
                    let folders = try touchedFolders([parent], &state)
                    if try !promoteLink(of: m, touching: folders, &state) {
                        try database.modify(saving: folders, deleting: [m.recordID], deleteConditions: Self.unchanged(m))
                    }
                case .note(let m), .attachment(let m):
                    let folders = try touchedFolders([parent], &state)
                    if try promoteLink(of: m, touching: folders, &state) { return }
                    // Open descriptors keep reading (and writing) the bytes until the last close.
                    if state.files.handles.values.contains(inode) { _ = try openFile(inode, &state) }
                    try database.modify(saving: folders, deleting: [m.recordID], deleteConditions: Self.unchanged(m))
                }
            }
        }
    }

    /// Drops a scratch file; a note it hid (vim's backup) that was not brought back is deleted.
    func removeScratch(_ file: ScratchFile, _ state: inout FileSystemState) throws {
        if let hidden = file.detachedRecord {
            if let metadata = database.metadata(identity: hidden.inode) { try database.modify(deleting: [metadata.recordID]) }
            state.names.detached[file.parent]?[hidden.name] = nil
        }
        state.scratchFiles.files[file.inode] = nil
        state.names.listings[file.parent]?.remove(file.inode)
        state.files.open[file.inode]?.orphaned = true
        state.pageCache.inodeCaches[accessTime: file.inode] = nil
    }
}

import FUSE
import Foundation
import Notes
import RecordStore

/// Regular files: create, open, read, write, flush (the save), release, fsync, unlink.
extension NotesFileSystem {
    /// The bytes of a file as stored (no open buffer).
    func storedContent(_ node: Node) throws -> [UInt8] {
        switch node {
        case .note(let m): return Array(((try database.record(for: m.recordID))["text"]?.stringValue ?? "").utf8)
        case .attachment(let m):
            guard let asset = (try database.record(for: m.recordID))["content"]?.assetValue else { return [] }
            return [UInt8](try database.assetData(asset))
        case .scratch(let file): return file.content.read(offset: 0, size: file.content.count)
        case .root, .folder: throw Errno.isDirectory
        }
    }

    /// The open buffer of `inode`, loading it from the store on first use.
    func openFile(_ inode: Inode, _ state: inout FileSystemState) throws -> OpenFile {
        if let open = state.openFiles[inode] { return open }
        let node = try self.node(inode, state)
        let open: OpenFile
        switch node {
        case .scratch(let file): open = OpenFile(content: file.content, baseTag: nil)
        case .root, .folder: throw Errno.isDirectory
        case .note(let m), .attachment(let m):
            open = OpenFile(content: ContentBuffer(try storedContent(node)), baseTag: m.record.recordChangeTag)
        }
        state.openFiles[inode] = open
        return open
    }

    /// Saves a dirty buffer as one record save with the change tag it was loaded from.
    /// - Throws: `ESTALE` when the note changed elsewhere, `EILSEQ` for a note that is not UTF-8,
    ///   `EIO`/`ENOSPC` when the store cannot write. The bytes stay in the buffer on failure.
    func save(_ inode: Inode, _ state: inout FileSystemState) throws {
        guard let open = state.openFiles[inode], open.dirty else { return }
        if let file = state.scratch[inode], file.isPendingRecord, !open.orphaned {
            try savePending(file, &state)
            return
        }
        if state.scratch[inode] != nil || open.orphaned {
            open.dirty = false
            return
        }
        guard let metadata = database.metadata(identity: state.aliases[inode] ?? inode) else {
            open.orphaned = true
            open.dirty = false
            return
        }
        let contentKey = metadata.recordType == Note.recordType ? "text" : "content"
        var record = try recordForSave(metadata, replacing: contentKey)
        guard record.recordChangeTag == open.baseTag else {
            Log.warning("\(metadata.recordID): changed by someone else while open here; keeping this file's bytes unsaved")
            throw Errno.stale
        }
        let bytes = open.content.allBytes()
        if metadata.recordType == Note.recordType {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                Log.warning("\(metadata.recordID): note content is not UTF-8; not saved")
                throw Errno(rawValue: EILSEQ)
            }
            record["text"] = .string(text)
        } else {
            record["content"] = .asset(try database.makeAsset(Data(bytes)))
        }
        if let time = open.pendingModificationTime {
            Self.setModificationTime(time, of: &record)
        } else {
            record[MountFields.modificationNanoseconds] = nil
        }
        let saved = try database.modify(saving: [record]).savedRecords[0]
        open.baseTag = saved.recordChangeTag
        open.dirty = false
        open.pendingModificationTime = nil
        state.cachedTags[inode] = saved.recordChangeTag
        if options.synchronous { try database.sync() }
    }

    /// Saves a new file as its first record, under the identity reserved at create.
    func savePending(_ file: ScratchFile, _ state: inout FileSystemState) throws {
        let saved = try createRecord(named: file.name, folder: try folderReference(file.parent, state), from: file)
        state.scratch[file.inode] = nil
        if let open = state.openFiles[file.inode] {
            open.baseTag = saved.recordChangeTag
            open.dirty = false
            open.pendingModificationTime = nil
        }
        state.cachedTags[file.inode] = saved.recordChangeTag
        if options.synchronous { try database.sync() }
    }

    /// A new note or attachment named `name` from a scratch or pending file's bytes (a pending
    /// file keeps its reserved identity).
    @discardableResult
    func createRecord(named name: String, folder: RecordID?, from file: ScratchFile, deleting: RecordID? = nil) throws -> Record {
        let bytes = file.content.allBytes()
        var record: Record
        if EntryNames.isNoteFileName(name) {
            guard let text = String(validating: bytes, as: UTF8.self) else { throw Errno(rawValue: EILSEQ) }
            record = Note(title: EntryNames.title(fromFileName: name), text: text, folder: folder).record
        } else {
            record = Attachment(name: EntryNames.name(fromFileName: name), content: try database.makeAsset(Data(bytes)), folder: folder).record
        }
        if file.isPendingRecord { record.useReservedIdentity(file.inode) }
        record[MountFields.mode] = .int64(Int64(file.mode & 0o7777))
        record[MountFields.uid] = .int64(Int64(file.uid))
        record[MountFields.gid] = .int64(Int64(file.gid))
        if !file.isPendingRecord || file.modificationTimeWasSet { Self.setModificationTime(file.modificationTime, of: &record) }
        return try database.modify(saving: [record], deleting: deleting.map { [$0] } ?? []).savedRecords[0]
    }

    /// The record to save when only `key` changes: from memory when every other field is small
    /// (no record file read), else fetched.
    func recordForSave(_ metadata: RecordMetadata, replacing key: String) throws -> Record {
        if metadata.sizes.keys.allSatisfy({ $0 == key }) { return metadata.record }
        return try database.record(for: metadata.recordID)
    }

    /// Saves every dirty file (unmount, SIGTERM); returns how many could not be saved.
    func flushAll() -> Int {
        state.withLock { state in
            applyPendingChanges(&state)
            var failures = 0
            for (inode, open) in state.openFiles where open.dirty {
                do { try save(inode, &state) } catch {
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
        default: throw Errno.notDirectory
        }
    }

    /// Creates a regular file `name` in `parent`: a scratch file, a reattached hidden note, or a new record.
    func createFile(_ context: RequestContext, parent: Inode, name: String, mode: mode_t, _ state: inout FileSystemState) throws -> Inode {
        _ = try folderReference(parent, state)  // ENOTDIR for a file
        if try listing(parent, &state).names[name] != nil { throw Errno.exists }
        let permissions = mode & ~context.umask & 0o7777
        if ScratchNames.isScratch(name) {
            let file = ScratchFile(
                inode: state.nextScratchInode, parent: parent, name: name, content: ContentBuffer([]), mode: permissions,
                uid: context.uid, gid: context.gid)
            state.nextScratchInode += 1
            state.scratch[file.inode] = file
            state.listings[parent]!.upsert(file.inode, scratchMember(file))
            return file.inode
        }
        if let inode = state.detached[parent]?[name], let metadata = database.metadata(identity: inode) {
            // vim/emacs: the note renamed to a backup name comes back under its name, emptied.
            try reattach(inode, in: parent, name: name, &state)
            let open = try openFile(inode, &state)
            try open.content.truncate(0)
            open.baseTag = metadata.record.recordChangeTag
            open.dirty = true
            return inode
        }
        // A new note or attachment: saved at its first flush, under an identity reserved now.
        let file = ScratchFile(
            inode: try database.reserveIdentity(), parent: parent, name: name, content: ContentBuffer([]), mode: permissions,
            uid: context.uid, gid: context.gid)
        file.isPendingRecord = true
        state.scratch[file.inode] = file
        state.listings[parent]!.upsert(file.inode, scratchMember(file))
        let open = OpenFile(content: file.content, baseTag: nil)
        open.dirty = true
        state.openFiles[file.inode] = open
        return file.inode
    }

    /// Brings back a record hidden by a rename to a scratch name.
    func reattach(_ inode: Inode, in parent: Inode, name: String, _ state: inout FileSystemState) throws {
        state.detached[parent]?[name] = nil
        for file in state.scratch.values where file.detachedRecord?.inode == inode { file.detachedRecord = nil }
        if let metadata = database.metadata(identity: inode), let member = member(for: metadata) {
            _ = try listing(parent, &state)
            state.listings[parent]!.upsert(inode, member)
            state.parentOf[inode] = parent
        }
    }

    public func create(_ context: RequestContext, parent: Inode, name: FileName, mode: mode_t, flags: Int32) throws(Errno) -> (Entry, Opened) {
        let string = try validName(name)
        return try locked { (state) throws in
            let inode = try createFile(context, parent: parent, name: string, mode: mode, &state)
            let open = try openFile(inode, &state)
            open.handles += 1
            let handle = state.newHandle()
            state.handles[handle] = inode
            state.cachedTags[inode] = open.baseTag
            return (try entry(inode, state), Opened(handle: handle))
        }
    }

    public func mknod(_ context: RequestContext, parent: Inode, name: FileName, mode: mode_t, rdev: UInt64) throws(Errno) -> Entry {
        guard mode & S_IFMT == S_IFREG else { throw .permissionDenied }
        let string = try validName(name)
        return try locked { (state) throws in
            let inode = try createFile(context, parent: parent, name: string, mode: mode, &state)
            try save(inode, &state)
            if let open = state.openFiles[inode], open.handles == 0, !open.dirty { state.openFiles[inode] = nil }
            return try entry(inode, state)
        }
    }

    public func open(_ context: RequestContext, inode: Inode, flags: Int32) throws(Errno) -> Opened {
        try locked { (state) throws in
            let node = try self.node(inode, state)
            if case .folder = node { throw Errno.isDirectory }
            let handle = state.newHandle()
            state.handles[handle] = inode
            let writable = flags & O_ACCMODE != O_RDONLY
            if writable {
                if flags & O_TRUNC != 0, state.openFiles[inode] == nil, let metadata = node.metadata {
                    // The old bytes are about to go: do not read them.
                    let open = OpenFile(content: ContentBuffer([]), baseTag: metadata.record.recordChangeTag)
                    open.dirty = true
                    state.openFiles[inode] = open
                }
                try openFile(inode, &state).handles += 1
            } else {
                state.readers[inode, default: 0] += 1
            }
            // Keep the kernel's pages while the record is unchanged since they were cached.
            let tag = node.metadata?.record.recordChangeTag
            let keep = tag != nil && state.cachedTags[inode] == tag && state.openFiles[inode]?.dirty != true
            state.cachedTags[inode] = tag
            // A read-only open has nothing to save at close: no flush round trip.
            var opened = Opened(handle: handle, keepCache: keep)
            opened.noFlush = !writable
            return opened
        }
    }

    public func read(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, size: Int) throws(Errno) -> [UInt8] {
        try locked { (state) throws in
            if let open = state.openFiles[inode] { return open.content.read(offset: Int(offset), size: size) }
            let node = try node(inode, state)
            let tag = node.metadata?.record.recordChangeTag
            let bytes: [UInt8]
            if let cached = state.readCache[inode], cached.tag == tag {
                bytes = cached.bytes
            } else {
                bytes = try storedContent(node)
                // Kept while a reader has the file open, so that reading a large file in chunks
                // reads its record once.
                if tag != nil, state.readers[inode] != nil { state.readCache[inode] = (tag!, bytes) }
            }
            guard offset < bytes.count else { return [] }
            return Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + size)])
        }
    }

    public func write(
        _ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, data: UnsafeRawBufferPointer, flags: Int32
    ) throws(Errno) -> Int {
        try locked { (state) throws in
            guard state.handles[handle] == inode, let open = state.openFiles[inode] else { throw Errno.badFileDescriptor }
            let position = flags & O_APPEND != 0 ? open.content.count : Int(offset)
            try open.content.write(offset: position, data)
            open.dirty = true
            if let file = state.scratch[inode] { file.modificationTime = .now }
            return data.count
        }
    }

    public func flush(_ context: RequestContext, inode: Inode, handle: UInt64) throws(Errno) {
        try locked { (state) throws in try save(inode, &state) }
    }

    public func fsync(_ context: RequestContext, inode: Inode, handle: UInt64, dataOnly: Bool) throws(Errno) {
        try locked { (state) throws in
            try save(inode, &state)
            try database.sync()
        }
    }

    public func release(_ context: RequestContext, inode: Inode, handle: UInt64, flags: Int32) throws(Errno) {
        try locked { (state) throws in
            state.handles[handle] = nil
            if flags & O_ACCMODE == O_RDONLY, let open = state.openFiles[inode], open.orphaned, open.handles <= 0,
                !state.handles.values.contains(inode)
            {
                state.openFiles[inode] = nil  // the last reader of an unlinked file
            }
            if flags & O_ACCMODE == O_RDONLY {
                state.readers[inode, default: 1] -= 1
                if state.readers[inode]! <= 0 {
                    state.readers[inode] = nil
                    state.readCache[inode] = nil
                }
            }
            guard flags & O_ACCMODE != O_RDONLY, let open = state.openFiles[inode] else { return }
            open.handles -= 1
            if open.handles <= 0 {
                if open.dirty && !open.orphaned {
                    do { try save(inode, &state) } catch {
                        Log.error("inode \(inode): save failed at close (\(error)); the bytes stay in memory")
                        return
                    }
                }
                state.openFiles[inode] = nil
            }
        }
    }

    public func unlink(_ context: RequestContext, parent: Inode, name: FileName) throws(Errno) {
        let string = try validName(name)
        try locked { (state) throws in
            let inode = try child(parent, string, &state)
            switch try node(inode, state) {
            case .root, .folder: throw Errno.isDirectory
            case .scratch(let file):
                try removeScratch(file, &state)
            case .note(let m), .attachment(let m):
                // Open descriptors keep reading (and writing) the bytes until the last close.
                if state.handles.values.contains(inode) { _ = try openFile(inode, &state) }
                try database.modify(deleting: [m.recordID])
            }
        }
    }

    /// Drops a scratch file; a note it hid (vim's backup) that was not brought back is deleted.
    func removeScratch(_ file: ScratchFile, _ state: inout FileSystemState) throws {
        if let hidden = file.detachedRecord {
            if let metadata = database.metadata(identity: hidden.inode) { try database.modify(deleting: [metadata.recordID]) }
            state.detached[file.parent]?[hidden.name] = nil
        }
        state.scratch[file.inode] = nil
        state.listings[file.parent]?.remove(file.inode)
        state.openFiles[file.inode]?.orphaned = true
    }
}

import FUSE
import Foundation
import Notes
import RecordStore

/// rename(2): records keep their identity (recordName, creationDate, inode).
///
/// - within a folder it changes the title, across folders the folder reference;
/// - onto an existing note it is an atomic content replace: the target record keeps its
///   `recordName` and `creationDate` and takes the source's bytes, times, mode and owner, and the
///   source record is deleted, in one modify (sed -i, rsync, `os.replace`). What `stat` shows
///   follows POSIX: the target record takes the source's identity (its inode number) in that
///   modify, and descriptors still open on the replaced file keep reading its old bytes. (A source
///   that is editor scratch has no record: the target keeps its inode then.);
/// - to an editor scratch name (vim's `x~`) it hides the note behind an in-memory copy, and a file
///   created again under the old name brings the same record back (vim, emacs backup-by-rename);
/// - a folder into itself is `EINVAL`; `RENAME_NOREPLACE` gives `EEXIST`; `RENAME_EXCHANGE` swaps
///   two files (NotesFileSystem+Exchange.swift); `RENAME_WHITEOUT` is `EINVAL`;
/// - in `.tags`, a tag's directory to another name renames the tag (NotesFileSystem+TagRename.swift).
extension NotesFileSystem {
    public func rename(
        _ context: RequestContext, parent: Inode, name: FileName, newParent: Inode, newName: FileName, flags: RenameFlags
    ) throws(Errno) {
        if flags.contains(.whiteout) || (flags.contains(.exchange) && flags.contains(.noReplace)) { throw .invalidArgument }
        let source = try validName(name)
        let target = try validName(newName)
        if let tags = try tagRenaming(parent: parent, source, newParent: newParent, target, flags: flags, caller: context) {
            return try renameTag(from: tags.old, to: tags.new)
        }
        try refuseVirtualChange(in: parent, name: name)
        try refuseVirtualChange(in: newParent, name: newName)
        if flags.contains(.exchange) {
            return try locked { (state) throws in try exchange(parent: parent, source, newParent: newParent, target, &state) }
        }
        try locked { (state) throws in
            let inode = try listedChild(parent, source, &state)
            if inode == Self.recoveredInode { throw Errno.readOnly }
            let targetFolder = try folderReference(newParent, state)
            let existing = try listing(newParent, &state).names[target]
            try refuseRemoval(of: inode, from: parent, state)
            try refuseNewEntry(in: newParent, state)
            if let existing { try refuseRemoval(of: existing, from: newParent, state) }
            if existing == inode { return }
            if existing == Self.recoveredInode { throw Errno.readOnly }
            if existing != nil, flags.contains(.noReplace) { throw Errno.exists }
            let node = try self.node(inode, state)
            let existingNode = try existing.map { (inode) throws in try self.node(inode, state) }
            if case .folder(let metadata) = node {
                try renameFolder(
                    metadata, inode: inode, to: target, in: newParent, from: parent, folder: targetFolder, replacing: existingNode, &state)
                return
            }
            if case .folder = existingNode { throw Errno.isDirectory }
            if case .scratch(let file) = existingNode { try removeScratch(file, &state) }
            if try renameNode(
                node, inode: inode, replacing: existingNode, to: target, in: newParent, from: parent, folder: targetFolder, &state)
            {
                return
            }
            let replaced = try replaceable(existingNode, &state)
            // The inode that ends up behind the target name, and whether the source inode is gone
            // (then the kernel's dentry, moved onto the target name, must lead to the new inode).
            var targetInode = inode
            var sourceGone = false
            switch node {
            case .root, .recovered, .folder, .symlink, .special, .link: throw Errno.invalidArgument
            case .scratch(let file):
                if let replaced {
                    try replace(
                        replaced, with: file.content, time: file.modificationTime, mode: file.mode,
                        extendedAttributes: file.extendedAttributes, &state)
                    try removeScratch(file, &state)
                    (targetInode, sourceGone) = (replaced.identity, true)
                } else if ScratchNames.isScratch(target) {
                    file.isPendingRecord = false
                    moveScratch(file, to: target, in: newParent, &state)
                } else if let hidden = state.names.detached[newParent]?[target], let metadata = database.metadata(identity: hidden) {
                    try reattach(hidden, in: newParent, name: target, &state)
                    try replace(
                        metadata, with: file.content, time: file.modificationTime, mode: file.mode,
                        extendedAttributes: file.extendedAttributes, &state)
                    try removeScratch(file, &state)
                    (targetInode, sourceGone) = (hidden, true)
                } else if file.isPendingRecord {
                    // A new file not saved yet: save it under its new name (same inode).
                    file.name = target
                    state.names.listings[file.parent]?.remove(file.inode)
                    file.parent = newParent
                    try savePending(file, &state)
                } else {
                    let saved = try createRecord(named: target, folder: targetFolder, from: file)
                    try removeScratch(file, &state)
                    (targetInode, sourceGone) = (try Self.inode(of: saved), true)
                }
            case .note(let metadata), .attachment(let metadata):
                // The bytes, only where needed (a rename of a title reads none of them).
                let openContent = state.files.open[inode]?.content
                func content() throws -> ContentBuffer { try openContent?.copy() ?? loadContent(node) }
                if ScratchNames.isScratch(target) {
                    // No alias: the hidden note comes back under this inode when its name is created again.
                    targetInode = hide(
                        inode, named: source, in: parent, behind: target, in: newParent, content: try content(), context, &state)
                } else if let replaced {
                    try replace(
                        replaced, with: metadata, inode: inode, content: try openContent ?? loadContent(node),
                        parents: [parent, newParent], &state)
                } else if EntryNames.isNoteFileName(target) == (metadata.recordType == Note.recordType) {
                    var record = changeOnly(metadata, inode: inode, &state)  // partial: a rename reads and writes no text
                    let key = metadata.recordType == Note.recordType ? FieldName.title : FieldName.name
                    record[key] = .string(
                        metadata.recordType == Note.recordType
                            ? EntryNames.title(fromFileName: target) : EntryNames.name(fromFileName: target))
                    record.setReference(FieldName.folder, to: targetFolder)
                    let folders = try touchedFolders([parent, newParent], &state)
                    let (saved, rewrites) = try withLinkRewrites(for: .file(metadata.recordID, folder: targetFolder, fileName: target)) {
                        rewrites in
                        var renamed = record
                        mergeRewrite(rewrites, into: &renamed)
                        let others = rewrittenRecords(rewrites, except: metadata.recordID, &state)
                        return (try saveOne(renamed, touching: folders + others, unchangedSince: rewrites.token), rewrites)
                    }
                    if !rewrites.notes.contains(where: { $0.record.recordID == metadata.recordID }) {
                        linkIndex?.textKept(of: metadata.recordID, from: metadata.recordChangeTag, to: saved.recordChangeTag)
                    }
                    // An open (maybe dirty) buffer saves on top of the renamed record, not its old tag.
                    state.files.open[inode]?.baseTag = saved.recordChangeTag
                    finishRewrites(rewrites, &state)
                } else {
                    // note.md → note.txt and back: another record type, so another record.
                    let shown = try attributes(inode, state)  // the file keeps its mode and owner
                    let file = ScratchFile(
                        inode: 0, parent: newParent, name: target, content: try content(), mode: shown.mode & 0o7777, uid: shown.uid,
                        gid: shown.gid)
                    file.modificationTime = Self.fileTime(metadata)
                    file.extendedAttributes = try storedAttributes(of: metadata)  // the file's, whatever its record type
                    let saved = try createRecord(named: target, folder: targetFolder, from: file, deleting: metadata.recordID)
                    (targetInode, sourceGone) = (try Self.inode(of: saved), true)
                }
            }
            // The kernel moved the source's dentry onto the target name. When another inode is
            // behind that name now, make the kernel look again and drop that inode's cached pages
            // and size; until it does, the gone source inode stands for the target.
            if targetInode != inode {
                if sourceGone { state.names.aliases[inode] = targetInode }
                notifyKernel([.entry(parent: newParent, name: target), .inode(targetInode)])
            }
        }
    }

    private func renameFolder(
        _ metadata: RecordMetadata, inode: Inode, to target: String, in newParent: Inode, from parent: Inode, folder: RecordID?,
        replacing existing: Node?, _ state: inout FileSystemState
    ) throws {
        var deletes: [RecordID] = []
        if let existing {
            guard case .folder(let victim) = existing else { throw Errno.notDirectory }
            guard try listing(victim.identity, &state).names.isEmpty else { throw Errno.notEmpty }
            deletes.append(victim.recordID)
        }
        try refuseMove(of: metadata.recordID, into: folder, &state)
        var record = changeOnly(metadata, inode: inode, &state)
        record[FieldName.name] = .string(EntryNames.name(fromFileName: target))
        record.setReference(FieldName.parent, to: folder)
        let folders = try touchedFolders([parent, newParent], &state)
        let rewrites = try withLinkRewrites(for: .folder(metadata.recordID, parent: folder, name: target)) { rewrites in
            // The replaced folder must still be empty at commit time (another process may fill it).
            try database.modify(
                saving: [record] + folders + rewrittenRecords(rewrites, &state), deleting: deletes,
                deleteConditions: Dictionary(uniqueKeysWithValues: deletes.map { ($0, DeleteCondition(refusesCascade: true)) }),
                unchangedSince: rewrites.token)
            return rewrites
        }
        finishRewrites(rewrites, &state)
    }

    /// Rename of record `source` (inode `inode`) over record `target`: one modify saves the target
    /// record with the source's bytes, times, mode, owner and identity, and deletes the source
    /// record. The replaced inode's bytes stay readable by descriptors still open on it.
    private func replace(
        _ target: RecordMetadata, with source: RecordMetadata, inode: Inode, content: ContentBuffer, parents: [Inode],
        _ state: inout FileSystemState
    ) throws {
        let replacedInode = target.identity
        if state.files.handles.values.contains(replacedInode) { _ = try openFile(replacedInode, &state) }
        // The target's metadata, not its whole record: the new bytes replace its text, and the
        // store keeps any other large field as stored (a partial save). Reading the old text here
        // cost an editor's save 37 µs (perf of 3,000 saves); the version kept of it reads it once.
        var record = target.record
        try storedBytes(of: content, recordType: target.recordType).apply(to: &record)
        for key in [MountFields.mode, MountFields.uid, MountFields.gid, MountFields.accessNanoseconds, MountFields.modificationNanoseconds]
        {
            record[key] = source.field(key)
        }
        try storedAttributes(of: source).write(into: &record)
        record.modificationDate = source.modificationDate
        Self.stampChange(&record, inode: inode, &state)
        record.takeIdentity(inode)
        let saved = try saveOne(record, deleting: [source.recordID], touching: try touchedFolders(parents, &state))
        // The replaced inode is gone from every listing; its open descriptors read the bytes loaded above.
        for parent in parents { _ = state.names.listings[parent]?.remove(replacedInode) }
        state.names.parentOf[replacedInode] = nil
        state.files.open[replacedInode]?.orphaned = true
        state.pageCache.inodeCaches.remove(replacedInode)
        state.files.open[inode]?.baseTag = saved.recordChangeTag
        state.pageCache.inodeCaches[cachedTag: inode] = saved.recordChangeTag
    }

    /// `target` keeps its identity and takes `content` (and mtime and mode): a scratch file renamed
    /// over it. A clean buffer still open on it takes the new bytes (``refreshCleanBuffer(_:tag:_:)``).
    private func replace(
        _ target: RecordMetadata, with content: ContentBuffer, time: FileTime, mode: mode_t?,
        extendedAttributes: ExtendedAttributes, _ state: inout FileSystemState
    ) throws {
        var record = target.record  // its metadata: the new bytes replace the text (see above)
        try storedBytes(of: content, recordType: target.recordType).apply(to: &record)
        if let mode { record[MountFields.mode] = .int64(Int64(mode & 0o7777)) }
        extendedAttributes.write(into: &record)
        Self.setModificationTime(time, of: &record)
        let saved = try saveOne(record)
        refreshCleanBuffer(target.identity, tag: saved.recordChangeTag, &state)
    }

    /// Throws `EINVAL` when folder `moved` would go into `folder`, which is itself or in its own
    /// subtree (as shown: the tree's placements end at the root or Recovered, so this walk ends
    /// even where the records form a cycle).
    func refuseMove(of moved: RecordID, into folder: RecordID?, _ state: inout FileSystemState) throws(Errno) {
        let tree = folderTree(&state)
        var ancestor = folder
        while let current = ancestor {
            if current == moved { throw .invalidArgument }
            guard case .folder(let parent) = tree.placement(ofFolder: current) else { break }
            ancestor = parent
        }
    }

    private func moveScratch(_ file: ScratchFile, to name: String, in parent: Inode, _ state: inout FileSystemState) {
        state.names.listings[file.parent]?.remove(file.inode)
        file.parent = parent
        file.name = name
        state.names.listings[parent]?.upsert(file.inode, scratchMember(file))
    }

    /// Hides a note behind a scratch copy named `target` (see the type's documentation).
    private func hide(
        _ inode: Inode, named source: String, in parent: Inode, behind target: String, in newParent: Inode, content: ContentBuffer,
        _ context: RequestContext, _ state: inout FileSystemState
    ) -> Inode {
        let attributes = try? self.attributes(inode, state)
        let file = ScratchFile(
            inode: state.scratchFiles.nextInode, parent: newParent, name: target, content: content,
            mode: (attributes?.mode ?? 0o644) & 0o7777, uid: attributes?.uid ?? context.uid, gid: attributes?.gid ?? context.gid)
        state.scratchFiles.nextInode += 1
        if let time = attributes?.modificationTime { file.modificationTime = time }
        file.detachedRecord = (inode, source)
        state.scratchFiles.files[file.inode] = file
        state.names.listings[newParent]?.upsert(file.inode, scratchMember(file))
        state.names.listings[parent]?.remove(inode)
        state.names.parentOf[inode] = nil
        state.names.detached[parent, default: [:]][source] = inode
        return file.inode
    }
}

import FUSE
import Foundation
import Notes
import RecordStore

/// `open(dir, O_TMPFILE)` and `linkat` of it (the atomic save of editors and databases): an
/// unnamed file, held in memory like editor scratch (in no listing, never saved), under an
/// identity reserved now. `link` gives it its name and saves it as a note or attachment of that
/// identity, so the descriptor goes on writing the named file; its last close without a link
/// drops it. (libfuse 3.14 has no `tmpfile` operation: FUSE's Tmpfile.swift serves the request.)
extension NotesFileSystem {
    public func tmpfile(_ context: RequestContext, parent: Inode, mode: mode_t, flags: Int32) throws(Errno) -> (Entry, Opened) {
        try refuseVirtualChange(in: parent)
        return try locked { (state) throws in
            _ = try folderReference(parent, state)  // ENOTDIR for a file, EROFS in Recovered
            try refuseNewEntry(in: parent, state)
            let (permissions, inherited) = newEntryAccess(mode, in: parent, directory: false, context, state)
            let file = ScratchFile(
                inode: try database.reserveIdentity(), parent: parent, name: "",
                content: ContentBuffer(spillDirectory: database.temporaryDirectoryPath), mode: permissions, uid: context.uid,
                gid: context.gid)
            file.isPendingRecord = true
            file.isUnnamed = true
            file.extendedAttributes = inherited
            state.scratchFiles.files[file.inode] = file
            let open = OpenFile(content: file.content, baseTag: nil)
            open.markChanged()
            open.handles += 1
            state.files.open[file.inode] = open
            let handle = state.newHandle()
            state.files.handles[handle] = file.inode
            return (try entry(file.inode, state), Opened(handle: handle))
        }
    }

    /// Names unnamed file `file` `name` in `parent` (its `linkat`): a note or attachment of its
    /// identity, saved now with its bytes so far (editor scratch names stay in memory).
    func name(_ file: ScratchFile, _ name: String, in parent: Inode, _ state: inout FileSystemState) throws -> Entry {
        file.name = name
        file.parent = parent
        file.isUnnamed = false
        if ScratchNames.isScratch(name) {
            file.isPendingRecord = false
            state.names.listings[parent]?.upsert(file.inode, scratchMember(file))
            return try entry(file.inode, state)
        }
        state.names.listings[parent]?.upsert(file.inode, scratchMember(file))
        try savePending(file, &state)
        return try entry(file.inode, state)
    }
}

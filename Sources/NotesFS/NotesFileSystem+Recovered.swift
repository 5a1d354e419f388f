import FUSE
import Notes
import RecordStore

/// Keeping the virtual `Recovered` directory in step with the store while mounted.
///
/// What it holds changes without any change to the folders it lists: a note is stranded when its
/// folder is deleted without a cascade (or arrives a sync page before its folder), and leaves
/// when it moves or a folder of the missing record's name arrives. So after every change that
/// saves or deletes a folder, or saves or deletes an item placed there, the root shows
/// `Recovered` exactly while something is recovered, and its listing is built again after a
/// change to folders (the items whose folder arrived leave it).
extension NotesFileSystem {
    /// Whether `change`, which adds, deletes or moves no folder, may still change what `Recovered`
    /// holds (asked before it is applied to the listings): it saves an item placed there, or saves
    /// or deletes anything while the root shows `Recovered` (an item may leave it). A change to
    /// folders always may; a folder saved in place (its name or times: every note's save touches
    /// its folder) is not one, since the hierarchy, and so which items are stranded, stays as it
    /// was, and finding stranded items walks every referenced record (a thousand folders at a
    /// million notes).
    func touchesRecovered(_ change: RecordStoreChange, _ state: inout FileSystemState) -> Bool {
        if state.names.listings[Self.rootInode]?.nameOf[Self.recoveredInode] != nil { return true }
        return change.saved.contains { parentInode(of: $0, &state) == Self.recoveredInode }
    }

    /// Shows or hides the root's `Recovered` entry as the tree now requires, and drops its
    /// listing after a change to folders (see the type's documentation); queues what the kernel
    /// must hear.
    func refreshRecovered(foldersChanged: Bool, _ out: inout [Invalidation], _ state: inout FileSystemState) {
        let (root, recovered) = (Self.rootInode, Self.recoveredInode)
        if foldersChanged, let old = state.names.listings.removeValue(forKey: recovered) {
            for (inode, name) in old.nameOf {
                out.append(.entry(parent: recovered, name: name))
                if state.names.parentOf[inode] == recovered { state.names.parentOf[inode] = nil }
            }
        }
        guard state.names.listings[root] != nil else { return }  // built with the entry when needed
        let show = folderTree(&state).showsRecovered(in: database)
        let shown = state.names.listings[root]?.nameOf[recovered]
        if show, shown == nil {
            for rename in state.names.listings[root]?.upsert(recovered, Self.recoveredMember) ?? [] {
                if let old = rename.old { out.append(.entry(parent: root, name: old)) }  // a real folder's suffix moved
            }
            state.names.parentOf[recovered] = root
            // The kernel may hold the name as a negative entry.
            if let name = state.names.listings[root]?.nameOf[recovered] { out.append(.entry(parent: root, name: name)) }
        } else if !show, let shown {
            for rename in state.names.listings[root]?.remove(recovered) ?? [] where rename.inode != recovered {
                if let old = rename.old { out.append(.entry(parent: root, name: old)) }
            }
            state.names.parentOf[recovered] = nil
            state.names.listings[recovered] = nil
            out.append(.delete(parent: root, child: recovered, name: shown))
        }
    }
}

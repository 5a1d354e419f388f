import FUSE
import Foundation
import Notes
import RecordStore

/// `mv .tags/old .tags/new`: the one change `.tags` takes. A rename of a tag's directory to
/// another name anywhere under `.tags` (`.tags/project/alpha` → `.tags/project/beta`, or
/// `.tags/work/alpha`) renames that tag and the tags nested under it in every note that has
/// them, in one commit (``NotesSearchIndex/tagRename(from:to:)``; the notes `notesfs tag rename`
/// rewrites). Rewritten notes get mtime now; their clean open buffers take the new bytes and the
/// kernel drops their pages; a buffer with unsaved writes is not touched (its save then meets the
/// newer record: the conflict copy's rule).
///
/// A new name that is no tag name is `EINVAL`; `RENAME_NOREPLACE` onto a listed name `EEXIST`;
/// onto an existing tag the two merge. A failed commit changes nothing (its errno). Every other
/// change under `.tags` (a note's link in it, `RENAME_EXCHANGE`, a rename out of or into it) is
/// `EROFS`, as in every virtual tree.
extension NotesFileSystem {
    /// The tags a rename renames: nil when it is no rename of a `.tags` directory within `.tags`.
    /// - Throws: `ENOENT` when the source is not listed; `EEXIST` with `RENAME_NOREPLACE` onto a
    ///   listed name.
    func tagRenaming(
        parent: Inode, _ source: String, newParent: Inode, _ target: String, flags: RenameFlags, caller: RequestContext
    ) throws(Errno) -> (old: String, new: String)? {
        guard VirtualNodeTable.isVirtual(parent), VirtualNodeTable.isVirtual(newParent), !flags.contains(.exchange) else { return nil }
        let kinds = state.withLock { ($0.virtualNodes.nodes[parent]?.kind, $0.virtualNodes.nodes[newParent]?.kind) }
        guard case .directory(let tree, let path)? = kinds.0, case .directory(let newTree, let newPath)? = kinds.1, tree == newTree,
            virtualTrees[tree] is Tags
        else { return nil }
        guard let item = listedItem(named: source, in: try virtualItems(parent, caller: caller), tree: tree) else { throw .noEntry }
        guard case .directory = item.kind else { return nil }
        if flags.contains(.noReplace), listedItem(named: target, in: try virtualItems(newParent, caller: caller), tree: tree) != nil {
            throw .exists
        }
        return ((path + [source]).joined(separator: "/"), (newPath + [target]).joined(separator: "/"))
    }

    /// Renames tag `old` to `new` in every note, in one commit.
    /// - Throws: `EINVAL` when `new` is no tag name; `ENOENT` when no note has `old`; `EIO` when
    ///   the index cannot answer or no note that has it can be rewritten; the commit's errno.
    func renameTag(from old: String, to new: String) throws(Errno) {
        guard let index = searchBox.withLock({ $0?.notesIndex }) else { throw .io }
        // Caught up before the state lock, so the catch-up under it has little left to do.
        do { try index.catchUp() } catch { Log.warning("tags: \(error.description)") }
        try locked { (state) throws in
            let plan: TagRename
            do throws(TagRenameError) { plan = try index.tagRename(from: old, to: new) } catch {
                Log.warning("tags: #\(old) not renamed to #\(new): \(error.description)")
                switch error {
                case .invalidName: throw Errno.invalidArgument
                case .index: throw Errno.io
                }
            }
            for (path, reason) in plan.notRewritten { Log.warning("tags: \(path): #\(old) not renamed: \(reason)") }
            if plan.notes.isEmpty {
                if old == new { return }
                throw plan.notRewritten.isEmpty ? Errno.noEntry : Errno.io  // nothing could change
            }
            let records = plan.notes.map(\.record)
            try database.modify(saving: rewrittenRecords(records, &state))
            finishRewrites(of: records.map(\.recordID), &state)
        }
        // The rewritten notes are not the files this rename names: the reply waits until the
        // kernel was told to drop their pages and attributes (``waitForNotifications(within:)``).
        waitForNotifications(within: Self.rewriteNotificationWait)
    }

    /// How long a tag rename waits for the kernel to be told of the notes it rewrote.
    static let rewriteNotificationWait: Duration = .seconds(1)
}

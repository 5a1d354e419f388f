import FUSE
import Foundation
import Notes
import RecordStore

/// `renameat2(…, RENAME_EXCHANGE)`: two names swap the files behind them, atomically.
///
/// Both records keep their identity (record name, inode, bytes, creation date); each takes the
/// other's folder and name, in one modify, so no moment shows one name without a file. A note can
/// only be named `*.md` and nothing else can, so an exchange that would name a note otherwise (or
/// another file `*.md`) is `EINVAL`, as is one that involves editor scratch (held in memory, it has
/// no record to move) or would move a folder into its own subtree. `RENAME_WHITEOUT` (overlayfs'
/// whiteouts) is not supported: `EINVAL`.
extension NotesFileSystem {
    func exchange(
        parent: Inode, _ source: String, newParent: Inode, _ target: String, _ state: inout FileSystemState
    ) throws {
        let first = try listedChild(parent, source, &state)
        let second = try listedChild(newParent, target, &state)
        if first == Self.recoveredInode || second == Self.recoveredInode { throw Errno.readOnly }
        if first == second { return }
        try refuseRemoval(of: first, from: parent, state)
        try refuseRemoval(of: second, from: newParent, state)
        try refuseNewEntry(in: parent, state)
        try refuseNewEntry(in: newParent, state)
        let firstFolder = try folderReference(parent, state)
        let secondFolder = try folderReference(newParent, state)
        let firstRecord = try placed(try node(first, state), inode: first, named: target, in: secondFolder, &state)
        let secondRecord = try placed(try node(second, state), inode: second, named: source, in: firstFolder, &state)
        let saved = try database.modify(saving: [firstRecord, secondRecord] + (try touchedFolders([parent, newParent], &state)))
        // Open (maybe dirty) buffers save on top of the exchanged records, not their old tags.
        for record in saved.savedRecords {
            if let identity = record.identity { state.files.open[identity]?.baseTag = record.recordChangeTag }
        }
    }

    /// `node`'s record with the name `fileName` in `folder`, its ctime moved (a `Link`'s: its
    /// own times are not shown).
    /// - Throws: `EINVAL` for editor scratch, a note named other than `*.md` (or another file
    ///   named `*.md`), a folder moved into its own subtree.
    private func placed(
        _ node: Node, inode: Inode, named fileName: String, in folder: RecordID?, _ state: inout FileSystemState
    ) throws -> Record {
        switch node {
        case .note(let m):
            guard EntryNames.isNoteFileName(fileName) else { throw Errno.invalidArgument }
            var record = changeOnly(m, inode: inode, &state)
            record[FieldName.title] = .string(EntryNames.title(fromFileName: fileName))
            record.setReference(FieldName.folder, to: folder)
            return record
        case .attachment(let m), .symlink(let m), .special(let m), .link(let m):
            if case .attachment = node, EntryNames.isNoteFileName(fileName) { throw Errno.invalidArgument }
            var record = changeOnly(m, inode: inode, &state)
            record[FieldName.name] = .string(EntryNames.name(fromFileName: fileName))
            record.setReference(FieldName.folder, to: folder)
            return record
        case .folder(let m):
            try refuseMove(of: m.recordID, into: folder, &state)
            var record = changeOnly(m, inode: inode, &state)
            record[FieldName.name] = .string(EntryNames.name(fromFileName: fileName))
            record.setReference(FieldName.parent, to: folder)
            return record
        case .root, .recovered, .scratch:
            throw Errno.invalidArgument
        }
    }
}

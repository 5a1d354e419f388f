import FUSE
import Foundation
import Notes
import RecordStore

/// A buffer whose save the store refused because its record changed elsewhere (`ESTALE`, which
/// the writer's `close` or `fsync` got), once no handle has it open (the last `release`, or an
/// unmount): its bytes are saved as a new record beside the file, named by ``ConflictName``
/// (`Title (conflict YYYY-MM-DD HOST).md`), and the buffer is dropped. So the file shows the
/// record as it is now and takes writes again, and the writer's bytes are kept where anyone can
/// see them. (Before, the refused buffer stood for the file until unmount: every later write was
/// refused too, and the bytes were lost at unmount.)
extension NotesFileSystem {
    /// Saves `open` (the buffer of `inode`, under the state lock) as a conflict copy and drops it;
    /// false, keeping the buffer, when there is no record to place it beside or the save fails.
    func saveAsConflictCopy(_ inode: Inode, _ open: OpenFile, _ state: inout FileSystemState) -> Bool {
        guard state.files.open[inode] === open, open.dirty, !open.orphaned, state.scratchFiles.files[inode] == nil,
            let metadata = database.metadata(identity: state.names.aliases[inode] ?? inode)
        else { return false }
        let isNote = metadata.recordType == Note.recordType
        let key = isNote ? FieldName.title : FieldName.name
        let current = metadata.field(key)?.stringValue ?? (try? database.record(for: metadata.recordID))?[key]?.stringValue
        let name = ConflictName.name(current ?? "Untitled", keepsExtension: !isNote)
        let folder = metadata.field(FieldName.folder)?.referenceValue?.recordID
        var record = isNote ? Note(title: name, folder: folder).record : Attachment(name: name, content: nil, folder: folder).record
        do {
            try storedBytes(of: open.content, recordType: metadata.recordType).apply(to: &record)
            for key in [MountFields.mode, MountFields.uid, MountFields.gid] { record[key] = metadata.field(key) }
            if let time = open.pendingModificationTime { Self.setModificationTime(time, of: &record) }
            let saved = try saveOne(record)
            Log.warning(
                "\(metadata.recordID): changed elsewhere while open here; this file's unsaved bytes are kept as \(name) (\(saved.recordID.recordName))"
            )
        } catch {
            Log.error("\(metadata.recordID): could not keep the refused bytes as a conflict copy (\(error)); they stay in memory")
            return false
        }
        state.files.open[inode] = nil
        state.pageCache.inodeCaches[cachedTag: inode] = nil
        state.files.readCache[inode] = nil
        // The kernel holds the refused bytes' size and maybe pages.
        notifyKernel([.inode(inode)])
        return true
    }
}

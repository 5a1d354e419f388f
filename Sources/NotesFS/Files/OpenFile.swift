import FUSE
import Foundation

/// The shared state of an inode open for writing: its bytes, loaded once and shared by every handle
/// (readers see a writer's bytes), and whether they differ from the record. A failed save leaves
/// it dirty: the bytes stay here, readable, until a save succeeds or the file is deleted.
///
/// Locks: the `var` properties are read and changed only while holding `NotesFileSystem.state`'s
/// lock. ``operationLock`` serialises the operations on this one file that do I/O outside the state
/// lock (write, truncate, save), so that a save streams bytes no write is changing; it is always
/// taken *before* the state lock, never while holding it. ``content`` is internally locked.
// @unchecked Sendable: the mutable properties are guarded by the state lock as said above.
final class OpenFile: @unchecked Sendable {
    var content: ContentBuffer
    var dirty = false
    /// Counts changes to the bytes: a save that streamed them commits `dirty = false` only if no
    /// write came in meanwhile.
    var generation: UInt64 = 0
    /// The record change tag the content was loaded from or last saved as (nil for scratch files).
    var baseTag: String?
    /// An mtime set while the file was dirty, saved with the content.
    var pendingModificationTime: FileTime?
    /// Writable handles open on this inode.
    var handles = 0
    /// The bytes changed since the last `fsync` (or since the open): while a writable handle is
    /// open, what a save (by another handle's close) stored is not final, and sync waits for it
    /// (``NotesFileSystem/recordsBeingWritten()``).
    var changedSinceFsync = false
    /// The record was deleted while open: writes are kept in memory and dropped at the last close.
    var orphaned = false
    /// Serialises this file's I/O operations (write, truncate, save); taken before the state lock.
    let operationLock = NSLock()

    init(content: ContentBuffer, baseTag: String?) {
        self.content = content
        self.baseTag = baseTag
    }

    /// Marks the bytes changed (under the state lock).
    func markChanged() {
        dirty = true
        changedSinceFsync = true
        generation &+= 1
    }
}

import FUSE

/// The shared state of an inode open for writing: its bytes, loaded once and shared by every handle
/// (readers see a writer's bytes), and whether they differ from the record. A failed save leaves
/// it dirty: the bytes stay here, readable, until a save succeeds or the file is deleted.
// @unchecked Sendable: instances live in `FileSystemState` and are only read or changed while
// holding `NotesFileSystem.state`'s lock.
final class OpenFile: @unchecked Sendable {
    var content: ContentBuffer
    var dirty = false
    /// The record change tag the content was loaded from or last saved as (nil for scratch files).
    var baseTag: String?
    /// An mtime set while the file was dirty, saved with the content.
    var pendingModificationTime: FileTime?
    /// Writable handles open on this inode.
    var handles = 0
    /// The record was deleted while open: writes are kept in memory and dropped at the last close.
    var orphaned = false

    init(content: ContentBuffer, baseTag: String?) {
        self.content = content
        self.baseTag = baseTag
    }
}

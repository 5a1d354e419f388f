import FUSE
import Foundation

/// Saves that failed at a file's last close, tried again: a full disk or an I/O error keeps the
/// bytes in the file's buffer (the writer's `close` got the errno), and this saves them as soon
/// as the store can take them, rather than only at the next close of the file or the unmount. It
/// runs on the notification thread, at most every ``failedSaveRetryInterval``.
extension NotesFileSystem {
    /// How often the failed saves are tried again.
    static let failedSaveRetryInterval: Duration = .seconds(1)

    /// Tries every failed save once more; a buffer whose save succeeds (or is kept as a conflict
    /// copy, when the record changed elsewhere meanwhile) is dropped.
    func retryFailedSaves() {
        let pending: [(Inode, OpenFile)] = state.withLock { state in
            state.files.failedSaves = state.files.failedSaves.filter { state.files.open[$0]?.dirty == true }
            // A file open again is left to its writer's close.
            return state.files.failedSaves.compactMap { inode in state.files.open[inode].flatMap { $0.handles <= 0 ? (inode, $0) : nil } }
        }
        for (inode, open) in pending {
            guard (try? saveAndDrop(inode, open)) != nil else { continue }  // tried again next time
            Log.info("inode \(inode): saved after an earlier failure")
            try? locked { state in _ = state.files.failedSaves.remove(inode) }
        }
    }
}

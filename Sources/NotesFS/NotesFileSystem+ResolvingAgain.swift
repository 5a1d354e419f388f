import FUSE
import Foundation
import RecordStore

/// Deletes that act on what a name stands for *now*.
///
/// The mount resolves a name from its listings, which follow other processes' commits a little
/// behind (the store's watcher, every 250 ms). A delete therefore says what it saw
/// (``DeleteCondition``: the record's change tag; for `rmdir`, that nothing is in the folder), the
/// store checks that at commit time against every commit made so far, and when it no longer holds
/// the mount catches up and resolves the name again: an `unlink` of a note the CLI has just moved
/// elsewhere finds the name gone (`ENOENT`) instead of deleting the note, and an `rmdir` of a
/// folder another process has just filled is `ENOTEMPTY`.
extension NotesFileSystem {
    /// How many times a delete is resolved again before its `ESTALE` is returned.
    static let resolveAttempts = 3

    /// Runs `body`; when its commit finds that a record it resolved changed elsewhere since
    /// (``RecordStoreError/serverRecordChanged(serverRecord:clientRecord:)``), applies the changes
    /// that commit caught up with to the listings and runs it again, at most ``resolveAttempts`` times.
    /// - Throws: what `body` throws the last time.
    func resolvingAgain<T>(_ state: inout FileSystemState, _ body: (inout FileSystemState) throws -> T) throws -> T {
        var attempt = 1
        while true {
            do {
                return try body(&state)
            } catch let error as RecordStoreError {
                guard case .serverRecordChanged = error, attempt < Self.resolveAttempts else { throw error }
                attempt += 1
                applyPendingChanges(&state)
            }
        }
    }

    /// Refuses a delete through `name` in `parent` when the store already holds a change made
    /// elsewhere that took the record away from that name (moved to another folder, renamed)
    /// while the listings have not applied it yet (a thread of this process caught the store up
    /// during the operation): the name no longer stands for the record, so `ENOENT`, after the
    /// listings catch up. The change tag alone cannot tell: it is the new one then.
    /// - Throws: `ENOENT`.
    func refuseStaleName(_ inode: Inode, _ metadata: RecordMetadata, in parent: Inode, _ state: inout FileSystemState) throws(Errno) {
        let movedAway = parentInode(of: metadata, &state).map { $0 != parent } ?? false
        let listed = state.names.listings[parent]?.members[inode]?.title
        let current = member(for: metadata)?.title
        let renamed = listed != nil && current != nil && listed != current
        guard movedAway || renamed else { return }
        applyPendingChanges(&state)
        throw .noEntry
    }

    /// The delete condition of `metadata`: deleted only while its change tag is the one seen.
    static func unchanged(_ metadata: RecordMetadata) -> [RecordID: DeleteCondition] {
        [metadata.recordID: DeleteCondition(recordChangeTag: metadata.recordChangeTag)]
    }
}

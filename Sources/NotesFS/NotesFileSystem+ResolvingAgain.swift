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

    /// The delete condition of `metadata`: deleted only while its change tag is the one seen.
    static func unchanged(_ metadata: RecordMetadata) -> [RecordID: DeleteCondition] {
        [metadata.recordID: DeleteCondition(recordChangeTag: metadata.recordChangeTag)]
    }
}

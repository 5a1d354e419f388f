import Dispatch
import RecordStore
import Synchronization

/// Records read on another thread: a build reads its next batch's record files while it writes
/// the batch before into the index. Started at init; ``records(ifFor:)`` waits for the reads.
///
/// The records are read as ``RecordDatabase/records(for:)`` reads them, so a batch read early may
/// miss a commit made meanwhile: a build ends with a catch-up from the token it started at, which
/// indexes every record changed after it (as a batch read on time may miss one too).
final class RecordPrefetch: Sendable {
    private let ids: [RecordID]
    /// Set once by the reading thread; `done` is signalled after it.
    private let result = Mutex<[RecordID: Result<Record, RecordStoreError>]>([:])
    private let done = DispatchSemaphore(value: 0)

    init(_ database: RecordDatabase, _ ids: [RecordID]) {
        self.ids = ids
        DispatchQueue.global(qos: .utility).async { [self] in
            let records = database.records(for: ids)
            result.withLock { $0 = records }
            done.signal()
        }
    }

    /// The records of `ids` when they are the ones this reads (nil otherwise: another process moved
    /// the build's cursor), once read. Called at most once.
    func records(ifFor ids: [RecordID]) -> [RecordID: Result<Record, RecordStoreError>]? {
        guard ids == self.ids else { return nil }
        done.wait()
        return result.withLock { $0 }
    }
}

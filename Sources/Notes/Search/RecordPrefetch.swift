import Foundation
import RecordStore
import Synchronization

/// Records read on other threads: a build reads its next batch's record files while it writes
/// the batch before into the index. Started at init; ``records(ifFor:)`` waits for the reads.
///
/// ``readers`` threads each read a slice (``RecordDatabase/records(for:)``): on a cold disk a
/// build waits for small random reads, and several in flight at once are served faster than one
/// after another (1,000,000 cold files: 167 s with 8 readers).
///
/// The records are read as ``RecordDatabase/records(for:)`` reads them, so a batch read early may
/// miss a commit made meanwhile: a build ends with a catch-up from the token it started at, which
/// indexes every record changed after it (as a batch read on time may miss one too).
final class RecordPrefetch: Sendable {
    /// The threads that read one batch.
    static let readers = 4

    private let ids: [RecordID]
    /// Each reader adds its slice; `done` is signalled when all have.
    private let result = Mutex<[RecordID: Result<Record, RecordStoreError>]>([:])
    private let done = DispatchGroup()

    init(_ database: RecordDatabase, _ ids: [RecordID]) {
        self.ids = ids
        let size = (ids.count + Self.readers - 1) / Self.readers
        for start in stride(from: 0, to: ids.count, by: max(1, size)) {
            let slice = Array(ids[start..<min(ids.count, start + size)])
            done.enter()
            Thread.detachNewThread { [self] in
                let records = database.records(for: slice)
                result.withLock { $0.merge(records) { kept, _ in kept } }
                done.leave()
            }
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

import Foundation
import RecordStore
import Synchronization

/// A batch of records read and worked on by other threads: a build reads its next batch's record
/// files, and makes their documents, while it writes the batch before into the index. Started at
/// init; ``value(ifFor:)`` waits for it.
///
/// ``readers`` threads each read a slice (``RecordDatabase/records(for:)``) and turn each record
/// into what `transform` makes of it: on a cold disk a build waits for small random reads, and
/// several in flight at once are served faster than one after another (1,000,000 cold files: 167 s
/// with 8 readers); and the text work (scanning links, the CJK and substring forms) is off the
/// writing thread. Then `finish` runs once, on the last reader's thread, over the whole batch: for
/// work that needs one thread's state (``FolderContents``, guarded by its own lock).
///
/// The records are read as ``RecordDatabase/records(for:)`` reads them, so a batch read early may
/// miss a commit made meanwhile: a build ends with a catch-up from the token it started at, which
/// indexes every record changed after it (as a batch read on time may miss one too).
final class RecordPrefetch<Item: Sendable, Value: Sendable>: Sendable {
    /// The threads that read one batch.
    static var readers: Int { 4 }

    private let ids: [RecordID]
    /// Each reader adds its slice; the last one to finish sets `value` and signals `ready`.
    private let state = Mutex<(items: [RecordID: Result<Item, RecordStoreError>], left: Int, value: Value?)>(([:], 0, nil))
    private let ready = DispatchSemaphore(value: 0)

    init(
        _ database: RecordDatabase, _ ids: [RecordID], transform: @escaping @Sendable (Record) -> Item,
        finish: @escaping @Sendable ([RecordID], [RecordID: Result<Item, RecordStoreError>]) -> Value
    ) {
        self.ids = ids
        let size = max(1, (ids.count + Self.readers - 1) / Self.readers)
        let slices = stride(from: 0, to: ids.count, by: size).map { Array(ids[$0..<min(ids.count, $0 + size)]) }
        state.withLock { $0.left = slices.count }
        guard !slices.isEmpty else {
            state.withLock { $0.value = finish(ids, [:]) }
            ready.signal()
            return
        }
        for slice in slices {
            Thread.detachNewThread { [self] in
                let items = database.records(for: slice).mapValues { $0.map(transform) }
                let all = state.withLock { (state) -> [RecordID: Result<Item, RecordStoreError>]? in
                    state.items.merge(items) { kept, _ in kept }
                    state.left -= 1
                    return state.left == 0 ? state.items : nil
                }
                guard let all else { return }
                let value = finish(ids, all)
                state.withLock { $0.value = value }
                ready.signal()
            }
        }
    }

    /// What `finish` made of the batch when `ids` are the ones this reads (nil otherwise: another
    /// process moved the build's cursor), once made. Called at most once.
    func value(ifFor ids: [RecordID]) -> Value? {
        guard ids == self.ids else { return nil }
        ready.wait()
        return state.withLock { $0.value }
    }
}

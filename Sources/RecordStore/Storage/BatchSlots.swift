/// One result slot for each item of a ``RecordFileBatch``: the worker that handles item `i`
/// writes slot `i`, and nothing reads the slots before the batch returns. No lock, and no copy of
/// the results into a shared list (a record is copied once, into its slot).
// @unchecked Sendable: each slot is written by exactly one worker (the batch hands every index to
// one worker), and the slots are read only after `RecordFileBatch.forEach` returns, whose
// `DispatchQueue.concurrentPerform` waits for every worker: those writes happen before the reads.
final class BatchSlots<Element: Sendable>: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<Element?>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil)
    }

    deinit {
        slots.deinitialize().deallocate()
    }

    /// Sets slot `i`: only from the worker handling item `i`.
    func set(_ i: Int, _ element: Element) { slots[i] = element }

    /// Takes every slot's element out (nil for a slot never set): only after the batch returned.
    func take() -> [Element?] {
        var taken: [Element?] = []
        taken.reserveCapacity(slots.count)
        for i in slots.indices { taken.append(slots[i].take()) }
        return taken
    }
}

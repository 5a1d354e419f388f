import Foundation
import RecordStore

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Gives the daemon's freed heap memory back to the kernel while it serves (glibc's
/// `malloc_trim(0)`), once a second at most and only after its RSS grew by ``growth``.
///
/// glibc returns a heap's memory to the kernel only from the heap's top. What requests free in
/// the middle (a note decoded, a journal line encoded, a listing built, a checkpoint's copy of
/// the index's rows) stays in the process as free chunks, so the daemon's RSS kept the most any
/// burst had used: at the peak of `scripts/bench.sh fs-scale`'s unlink phase (100,000 notes),
/// `malloc_stats()` counted 170 MB taken from the kernel and 88 MB in use. `malloc_trim(0)` hands
/// the free pages inside every arena back (`MADV_DONTNEED`); the chunks stay usable.
///
/// Its thread only reads `/proc/self/statm` between trims. A trim holds each arena's lock while
/// it walks that arena's free chunks: threads that allocate meanwhile wait for it.
final class MemoryTrimmer: Sendable {
    /// The RSS growth since the last trim (or the lowest RSS seen after it) that starts a trim.
    static let growth = 8 << 20
    private let worker: BackgroundWorker

    private init(worker: BackgroundWorker) { self.worker = worker }

    /// Starts the trimmer's thread (after the daemon forked: threads do not survive `fork`).
    /// Nil when the C library has no `malloc_trim` (not glibc).
    static func start() -> MemoryTrimmer? {
        guard let trim = MallocSettings.trim else { return nil }
        let worker = BackgroundWorker.start(name: "notesfs.trim", interval: .seconds(1)) { worker in
            var floor = residentBytes() ?? 0
            while worker.next() != nil {
                guard let resident = residentBytes() else { continue }
                if resident > floor + growth {
                    _ = trim(0)
                    floor = residentBytes() ?? resident
                } else {
                    floor = min(floor, resident)
                }
            }
        }
        return MemoryTrimmer(worker: worker)
    }

    /// Stops the thread and waits for it.
    func stop() {
        worker.stop()
        worker.join()
    }

    /// This process's resident set in bytes (`/proc/self/statm`'s second field, in pages).
    static func residentBytes() -> Int? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

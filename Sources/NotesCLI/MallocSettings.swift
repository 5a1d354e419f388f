#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The daemon's `malloc` settings (glibc's `mallopt`).
///
/// glibc serves allocations of 128 KiB and more with `mmap` and gives them back at `free`, but
/// its threshold is dynamic: after such a block is freed, blocks up to its size come from the
/// heap instead, where freed memory mostly stays in the process. The mount frees such blocks
/// all the time (1 MiB file-buffer chunks, record files read and written whole, listings
/// rebuilt), across a dozen threads with an arena each, so its RSS kept what its peak had used.
/// A fixed threshold keeps large blocks out of the heaps: measured at 100,000 notes (create,
/// remount, `ls -lR`, read all, unlink all; one run each, release build), the daemon's peak RSS
/// was 175 MB with it and 213 MB without.
enum MallocSettings {
    /// The fixed `M_MMAP_THRESHOLD` (glibc's initial value, kept from then on).
    static let mmapThreshold: Int32 = 128 << 10
    /// `M_MMAP_THRESHOLD` of glibc's `<malloc.h>`, which the Glibc module does not import.
    static let mmapThresholdParameter: Int32 = -3

    /// Fixes the mmap threshold, unless the user chose one (`MALLOC_MMAP_THRESHOLD_`, which glibc
    /// has applied already). Call before the daemon's threads start.
    /// - Returns: whether `mallopt` took the setting.
    @discardableResult
    static func applyForDaemon() -> Bool {
        guard getenv("MALLOC_MMAP_THRESHOLD_") == nil else { return false }
        // `mallopt(3)` is not in the Glibc module either: found by name in the C library.
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "mallopt") else { return false }
        return unsafeBitCast(symbol, to: Mallopt.self)(mmapThresholdParameter, mmapThreshold) == 1
    }
}

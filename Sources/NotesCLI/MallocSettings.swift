import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The daemon's `malloc` settings (glibc's `mallopt`), and its `malloc_trim` (``MemoryTrimmer``).
///
/// glibc serves allocations of 128 KiB and more with `mmap` and gives them back at `free`, but
/// its threshold is dynamic: after such a block is freed, blocks up to its size come from the
/// heap instead, where freed memory mostly stays in the process. The mount frees such blocks
/// all the time (1 MiB file-buffer chunks, record files read and written whole, listings
/// rebuilt), across a dozen threads with an arena each, so its RSS kept what its peak had used.
/// A fixed threshold keeps large blocks out of the heaps: measured at 100,000 notes (create,
/// remount, `ls -lR`, read all, unlink all; one run each, release build), the daemon's peak RSS
/// was 175 MB with it and 213 MB without.
///
/// glibc also gives each new thread that allocates an arena of its own, up to eight per CPU.
/// Each arena keeps the memory freed in it, so a dozen request threads kept a dozen heaps of
/// freed chunks: at `scripts/bench.sh fs-scale`'s old peak, `malloc_stats()` counted seven arenas
/// of 11-36 MB, five of them with 2-4 MB in use. No more threads than CPUs run at once, so the
/// daemon keeps as many arenas as it has CPUs.
enum MallocSettings {
    /// The fixed `M_MMAP_THRESHOLD` (glibc's initial value, kept from then on).
    static let mmapThreshold: Int32 = 128 << 10
    /// `M_MMAP_THRESHOLD` and `M_ARENA_MAX` of glibc's `<malloc.h>`, which the Glibc module does
    /// not import.
    static let mmapThresholdParameter: Int32 = -3
    static let arenaMaxParameter: Int32 = -8

    /// What ``applyForDaemon()`` set.
    struct Applied: Equatable {
        var mmapThreshold = false
        var arenaMax = false
    }

    /// Fixes the mmap threshold and the number of arenas, each unless the user chose it
    /// (`MALLOC_MMAP_THRESHOLD_`, `MALLOC_ARENA_MAX`, which glibc has applied already). Call
    /// before the daemon's threads start.
    /// - Returns: what `mallopt` took.
    @discardableResult
    static func applyForDaemon() -> Applied {
        var applied = Applied()
        guard let mallopt else { return applied }
        if getenv("MALLOC_MMAP_THRESHOLD_") == nil {
            applied.mmapThreshold = mallopt(mmapThresholdParameter, mmapThreshold) == 1
        }
        if getenv("MALLOC_ARENA_MAX") == nil {
            applied.arenaMax = mallopt(arenaMaxParameter, arenaMax) == 1
        }
        return applied
    }

    /// The arenas the daemon keeps: one per CPU it may run on.
    static var arenaMax: Int32 { Int32(max(1, min(64, ProcessInfo.processInfo.activeProcessorCount))) }

    // `mallopt(3)` and `malloc_trim(3)` are not in the Glibc module either: found by name in the C library.
    private static let mallopt: (@convention(c) (Int32, Int32) -> Int32)? = dlsym(nil, "mallopt").map {
        unsafeBitCast($0, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }
    static let trim: (@convention(c) (Int) -> Int32)? = dlsym(nil, "malloc_trim").map {
        unsafeBitCast($0, to: (@convention(c) (Int) -> Int32).self)
    }
}

/// The per-inode memory of a mount without a mount: change tags and unsaved atimes read back
/// exactly as set, whatever their value, or (a tag the store never writes) not at all.

import FUSE
import Foundation
import TestSupport
import Testing

@testable import NotesFS

@Suite struct InodeCachesTests {
    @Test func tagsTheStoreWritesReadBack() {
        var caches = InodeCaches()
        for (inode, seq) in [(1, 1), (2, 35), (3, 36), (4, 1_000_000), (5, Int(Int64.max))] as [(Inode, Int)] {
            let tag = String(UInt64(seq), radix: 36)
            caches[cachedTag: inode] = tag
            #expect(caches[cachedTag: inode] == tag)
        }
        caches[cachedTag: 3] = nil
        #expect(caches[cachedTag: 3] == nil && caches[cachedTag: 4] == "lfls")
    }

    /// A tag spelt otherwise could read back as another spelling of its number ("0a" as "a"):
    /// it is not kept, so the next open drops the kernel's pages instead of keeping stale ones.
    @Test(arguments: ["0a", "A", "", "-1", "a b", "zzzzzzzzzzzzzzzzzzzz", "3w5e11264sgsf", "é"])
    func otherTagsAreNotKept(_ tag: String) {
        var caches = InodeCaches()
        caches[cachedTag: 7] = "a"
        caches[cachedTag: 7] = tag
        #expect(caches[cachedTag: 7] == nil)
    }

    @Test func accessTimesReadBackExactlyInsideAndOutsideNanosecondRange() {
        var caches = InodeCaches()
        let times = [
            FileTime(seconds: 1_764_000_000, nanoseconds: 123_456_789), FileTime(seconds: 0),
            FileTime(seconds: -1, nanoseconds: 999_999_999),
            FileTime(seconds: 10_000_000_000, nanoseconds: 5),  // year 2286: beyond Int64 nanoseconds
            FileTime(seconds: -10_000_000_000), FileTime(seconds: Int64.max, nanoseconds: 999_999_999), FileTime(seconds: Int64.min),
            FileTime(seconds: 5, nanoseconds: 1_500_000_000),  // not normalised: kept as given
        ]
        for (i, time) in times.enumerated() { caches[accessTime: Inode(100 + i)] = time }
        for (i, time) in times.enumerated() { #expect(caches[accessTime: Inode(100 + i)] == time) }
        // Moving between the two kinds of storage leaves no old value behind.
        caches[accessTime: 103] = FileTime(seconds: 1)
        #expect(caches[accessTime: 103] == FileTime(seconds: 1))
        caches[accessTime: 100] = FileTime(seconds: 20_000_000_000)
        #expect(caches[accessTime: 100] == FileTime(seconds: 20_000_000_000))
        #expect(caches.removeAccessTime(100) == FileTime(seconds: 20_000_000_000))
        #expect(caches[accessTime: 100] == nil && caches.removeAccessTime(100) == nil)
    }

    @Test func tagsAndAccessTimesAreIndependent() {
        var caches = InodeCaches()
        caches[cachedTag: 9] = "2o"
        caches[accessTime: 9] = FileTime(seconds: 42)
        caches[accessTime: 10] = FileTime(seconds: 43)
        caches.removeAllTags()
        #expect(caches[cachedTag: 9] == nil && caches[accessTime: 9] == FileTime(seconds: 42))
        caches[cachedTag: 9] = "2p"
        #expect(caches.removeAccessTime(9) == FileTime(seconds: 42))
        #expect(caches[cachedTag: 9] == "2p" && caches[accessTime: 10] == FileTime(seconds: 43))
        // Removing an inode forgets both of its own, an atime kept apart too, and no other's.
        caches[accessTime: 9] = FileTime(seconds: 20_000_000_000)
        caches.remove(9)
        #expect(caches[cachedTag: 9] == nil && caches[accessTime: 9] == nil)
        #expect(caches[accessTime: 10] == FileTime(seconds: 43))
    }

    @Test func anInodeOnceGivenATagMayHoldPagesUntilTheMountEnds() {
        var caches = InodeCaches()
        #expect(!caches.mayHoldPages(1))
        caches[accessTime: 1] = FileTime(seconds: 7)  // utimensat: no pages
        #expect(!caches.mayHoldPages(1))
        caches[cachedTag: 2] = "2o"
        caches[cachedTag: 3] = "not a commit number"  // not kept, but pages may exist
        caches[cachedTag: 4] = nil  // forgotten: the kernel may still hold them
        caches[cachedTag: 5] = "2p"
        caches.remove(5)  // gone: its identity is never opened again
        caches[cachedTag: 6] = "2q"
        caches.removeAllTags()
        for inode: Inode in [2, 3, 4, 6] { #expect(caches.mayHoldPages(inode), "inode \(inode)") }
        #expect(caches[cachedTag: 3] == nil && caches[cachedTag: 4] == nil && caches[cachedTag: 6] == nil)
        #expect(!caches.mayHoldPages(1) && !caches.mayHoldPages(5) && !caches.mayHoldPages(7))
    }
}

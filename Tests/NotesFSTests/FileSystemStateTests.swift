import Foundation
import Testing

@testable import NotesFS

/// The filesystem state's invariants (``FileSystemState/invariantViolations()``): a fresh state
/// keeps them, and each broken one is reported (debug builds stop on them after every operation).
@Suite struct FileSystemStateTests {
    @Test func aFreshStateKeepsItsInvariants() {
        let state = FileSystemState()
        #expect(state.invariantViolations().isEmpty)
    }

    @Test func brokenInvariantsAreReported() {
        var state = FileSystemState()
        let handle = state.newHandle()
        state.files.handles[handle] = 7
        let open = OpenFile(content: ContentBuffer(spillDirectory: NSTemporaryDirectory()), baseTag: nil)
        open.handles = 2  // one handle is open on inode 7
        state.files.open[7] = open
        state.files.readCache[8] = (tag: "t", bytes: [])
        state.directories.open[99] = 9
        state.pageCache.storing[11] = 0
        state.names.parentOf[12] = 12
        let problems = state.invariantViolations()
        #expect(problems.contains { $0.contains("inode 7: 2 writable handles, 1 handles open") })
        #expect(problems.contains { $0.contains("inode 8: read cache without a reader") })
        #expect(problems.contains { $0.contains("directory handle 99 has no snapshot") })
        #expect(problems.contains { $0.contains("inode 11: 0 stores in flight") })
        #expect(problems.contains { $0.contains("inode 12 is its own parent") })
    }
}

import Foundation
import TestSupport
import Testing

@testable import NotesCLI

@Suite struct MallocSettingsTests {
    /// The daemon's `mallopt` is found and takes the threshold and the arena count (it returns 1
    /// on success), each unless the environment already chose it.
    @Test func mallocTakesTheDaemonsSettings() {
        let environment = ProcessInfo.processInfo.environment
        let applied = MallocSettings.applyForDaemon()
        #expect(applied.mmapThreshold == (environment["MALLOC_MMAP_THRESHOLD_"] == nil))
        #expect(applied.arenaMax == (environment["MALLOC_ARENA_MAX"] == nil))
        #expect(MallocSettings.arenaMax >= 1)
    }

    /// The trimmer's thread starts, reads this process's RSS, and stops when asked.
    @Test func trimmerReadsTheResidentSetAndStops() throws {
        let resident = try #require(MemoryTrimmer.residentBytes())
        // A test process holds at least its code: more than a megabyte, less than a terabyte.
        #expect(resident > 1 << 20 && resident < 1 << 40)
        let trimmer = try #require(MemoryTrimmer.start())
        trimmer.stop()
    }
}

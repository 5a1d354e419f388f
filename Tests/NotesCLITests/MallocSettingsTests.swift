import Foundation
import TestSupport
import Testing

@testable import NotesCLI

@Suite struct MallocSettingsTests {
    /// The daemon's `mallopt` is found and takes the threshold (it returns 1 on success), unless
    /// the environment already chose one.
    @Test func mallocTakesTheFixedMmapThreshold() {
        let chosen = ProcessInfo.processInfo.environment["MALLOC_MMAP_THRESHOLD_"] != nil
        #expect(MallocSettings.applyForDaemon() == !chosen)
    }
}

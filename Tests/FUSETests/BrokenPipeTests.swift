import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// In-process mounts run the daemon's code in the test process, which libfuse's signal handlers do
/// not cover: a write to a closed pipe must fail there, not kill every test (``reportBrokenPipes()``).
@Suite struct BrokenPipeTests {
    @Test func aWriteToAClosedPipeFailsWithEPIPE() {
        reportBrokenPipes()
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        defer { close(ends[1]) }
        var byte: UInt8 = 1
        let written = write(ends[1], &byte, 1)
        let failure = errno
        #expect(written == -1)
        #expect(failure == EPIPE)
    }
}

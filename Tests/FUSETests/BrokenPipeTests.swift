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

    /// A test process whose own output nobody reads any more ends as SIGPIPE would end it: its
    /// output's writer would retry for ever. A child of this process, its standard output a pipe
    /// with no reader, writes to it.
    @Test func aProcessWhoseOutputIsGoneEnds() {
        reportBrokenPipes()
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        let pid = fork()
        if pid == 0 {
            // The child: async-signal-safe calls only.
            var byte: UInt8 = 1
            if dup2(ends[1], STDOUT_FILENO) < 0 { _exit(2) }
            _ = write(STDOUT_FILENO, &byte, 1)
            _exit(errno == EPIPE ? 3 : 4)
        }
        close(ends[1])
        #expect(pid > 0)
        var status: Int32 = 0
        #expect(waitpid(pid, &status, 0) == pid)
        #expect(status & 0x7f == 0, "ended by signal \(status & 0x7f)")
        #expect((status >> 8) & 0xff == 128 + SIGPIPE)
    }
}

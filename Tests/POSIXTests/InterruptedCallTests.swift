/// `EINTR`: a blocking read on a pipe that a signal interrupts (a handler installed without
/// `SA_RESTART`) is made again by the POSIX layer, and returns the bytes written after it.

import Foundation
import POSIX
import Synchronization
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// How many times the test signal's handler ran (a signal handler can only reach globals).
private let signalsHandled = Atomic<Int>(0)

@Suite(.serialized) struct InterruptedCallTests {
    /// `SIGUSR2` with a handler that counts and no `SA_RESTART`: a blocking call it interrupts fails with `EINTR`.
    private static func installHandler() {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in signalsHandled.add(1, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGUSR2, &action, nil)
    }

    /// Runs `read` on a new thread while this one sends it `SIGUSR2` until `interrupted` says a
    /// signal has cut a blocking call short; then writes `payload` into the pipe and closes it.
    /// Returns what `read` returned.
    private static func readInterrupted<T: Sendable>(
        payload: [UInt8], until interrupted: @escaping @Sendable () -> Bool, reading read: @escaping @Sendable (Int32) -> T
    ) throws -> T {
        installHandler()
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { close(readEnd) }
        let reader = Mutex<pthread_t?>(nil)
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            // The test runner's threads may block the signal: let this one take it.
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGUSR2)
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            reader.withLock { $0 = pthread_self() }
            let value = read(readEnd)
            result.withLock { $0 = value }
            done.signal()
        }
        thread.start()
        let deadline = Date().addingTimeInterval(10)
        while !interrupted(), Date() < deadline {
            if let id = reader.withLock({ $0 }) { pthread_kill(id, SIGUSR2) }
            usleep(2000)
        }
        #expect(interrupted(), "no signal interrupted the read in 10 s")
        let written = payload.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
        #expect(written == payload.count)
        close(writeEnd)
        #expect(done.wait(timeout: .now() + 10) == .success)
        return try #require(result.withLock { $0 })
    }

    @Test func retryingMakesAnInterruptedReadAgain() throws {
        let calls = Atomic<Int>(0)
        let read: @Sendable (Int32) -> [UInt8] = { fd in
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = buffer.withUnsafeMutableBytes { raw in
                Syscall.retrying {
                    calls.add(1, ordering: .relaxed)
                    return Glibc.read(fd, raw.baseAddress, raw.count)
                }
            }
            return Array(buffer.prefix(max(count, 0)))
        }
        let bytes = try Self.readInterrupted(
            payload: Array("after the signal".utf8), until: { calls.load(ordering: .relaxed) > 1 }, reading: read)
        // A second call means the first failed with EINTR and was made again.
        #expect(calls.load(ordering: .relaxed) >= 2)
        #expect(signalsHandled.load(ordering: .relaxed) >= 1)
        #expect(bytes == Array("after the signal".utf8))
    }

    /// The signal does interrupt a blocking read: without the layer, `read` fails with `EINTR`.
    @Test func aPlainReadFailsWithEINTRUnderTheSameSignal() throws {
        let sawEINTR = Atomic<Bool>(false)
        let read: @Sendable (Int32) -> UInt8 = { fd in
            var byte: UInt8 = 0
            while Glibc.read(fd, &byte, 1) < 0 {
                if errno == EINTR { sawEINTR.store(true, ordering: .relaxed) } else { return UInt8(0) }
            }
            return byte
        }
        let byte = try Self.readInterrupted(payload: [42], until: { sawEINTR.load(ordering: .relaxed) }, reading: read)
        let interrupted = sawEINTR.load(ordering: .relaxed)
        #expect(interrupted)
        #expect(byte == 42)
    }

    @Test func readToEndReadsEverythingDespiteSignals() throws {
        let payload = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let start = signalsHandled.load(ordering: .relaxed)
        let read: @Sendable (Int32) -> [UInt8] = { fd in (try? Syscall.readToEnd(fd, limit: 1 << 20, path: "pipe")) ?? [] }
        let bytes = try Self.readInterrupted(
            payload: payload, until: { signalsHandled.load(ordering: .relaxed) > start + 2 }, reading: read)
        #expect(bytes == payload)
    }
}

/// Waiting for something another thread or process makes true.

import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Polls `condition` every 20 ms until it holds, for up to `seconds`: a generous bound for a loaded
/// machine, never a measured time (a test that expects something not to happen says how long it
/// watched). Returns whether it held; the condition is checked once more at the deadline.
public func eventually(_ seconds: Double = 30, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(20_000)
    }
    return try condition()
}

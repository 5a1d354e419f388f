/// `Watchdog`: runs an action if not cancelled in time (turns a hung handler into a test failure).

import Dispatch
import Synchronization

/// Runs `action` once after `seconds` unless `cancel()` came first.
public final class Watchdog: Sendable {
    private enum Phase: Int { case armed, cancelled, fired }
    private let phase = Atomic<Int>(Phase.armed.rawValue)

    public init(seconds: Double, action: @escaping @Sendable () -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
            let (exchanged, _) = self.phase.compareExchange(
                expected: Phase.armed.rawValue, desired: Phase.fired.rawValue, ordering: .acquiringAndReleasing)
            if exchanged { action() }
        }
    }

    /// Disarms the watchdog.
    /// - Returns: false if it had already fired.
    @discardableResult
    public func cancel() -> Bool {
        let (exchanged, original) = phase.compareExchange(
            expected: Phase.armed.rawValue, desired: Phase.cancelled.rawValue, ordering: .acquiringAndReleasing)
        return exchanged || original == Phase.cancelled.rawValue
    }

    /// True once the action ran.
    public var fired: Bool { phase.load(ordering: .acquiring) == Phase.fired.rawValue }
}

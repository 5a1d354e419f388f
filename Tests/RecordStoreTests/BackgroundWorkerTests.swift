import Foundation
import Synchronization
import TestSupport
import Testing

@testable import RecordStore

/// A background worker runs rounds when woken or when its interval passes, ends promptly when
/// stopped (whatever it waits in), and can be joined from anywhere, its own thread included.
@Suite struct BackgroundWorkerTests {
    /// Rounds seen by a worker's loop, and how it ended.
    final class Log: Sendable {
        let rounds = ConditionLock<[BackgroundWorker.Round]>([])
        let ended = ConditionLock<Bool>(false)

        func waitForRounds(_ count: Int, within limit: Duration = .seconds(10)) -> [BackgroundWorker.Round]? {
            rounds.wait(until: .now + limit) { $0.count >= count ? $0 : nil }
        }
    }

    static func looping(_ worker: BackgroundWorker, _ log: Log) {
        worker.start { worker in
            while let round = worker.next() { log.rounds.withLock { $0.append(round) } }
            log.ended.withLock { $0 = true }
        }
    }

    @Test func aWakeStartsARoundAtOnce() {
        let worker = BackgroundWorker(name: "test.wake", interval: .seconds(3600))
        let log = Log()
        Self.looping(worker, log)
        let started = ContinuousClock.now
        worker.wake()
        #expect(log.waitForRounds(1) == [.woken])
        #expect(ContinuousClock.now - started < .seconds(5))
        worker.stop()
        worker.join()
    }

    @Test func theIntervalStartsRounds() {
        let worker = BackgroundWorker(name: "test.interval", interval: .milliseconds(20))
        let log = Log()
        Self.looping(worker, log)
        #expect(log.waitForRounds(3)?.prefix(3).allSatisfy { $0 == .interval } == true)
        worker.stop()
        worker.join()
    }

    /// A worker waiting out an hour's interval, or an hour's pause, ends within moments of a stop.
    @Test(arguments: [false, true]) func aStopEndsAnyWaitAtOnce(pausing: Bool) {
        let worker = BackgroundWorker(name: "test.stop", interval: .seconds(3600))
        let log = Log()
        if pausing {
            worker.start { worker in
                log.rounds.withLock { $0.append(.woken) }
                log.ended.withLock { $0 = !worker.pause(.seconds(3600)) }
            }
            _ = log.waitForRounds(1)
        } else {
            Self.looping(worker, log)
        }
        let stopped = ContinuousClock.now
        worker.stop()
        #expect(worker.join(until: .now + .seconds(10)))
        #expect(ContinuousClock.now - stopped < .seconds(5))
        #expect(log.ended.read { $0 })
        #expect(worker.isStopping)
    }

    /// A hurry ends an hour's pause at once, and the round after it starts at once; a wake during
    /// the pause does not end it.
    @Test func aHurryEndsAPauseAndAWakeDoesNot() {
        let worker = BackgroundWorker(name: "test.hurry", interval: .seconds(3600))
        let paused = ConditionLock<Int>(0)
        let ends = ConditionLock<[Bool]>([])
        worker.start { worker in
            while worker.next() != nil {
                paused.withLock { $0 += 1 }
                let running = worker.pause(.seconds(3600))
                ends.withLock { $0.append(running) }
            }
        }
        worker.wake()
        #expect(paused.wait(until: .now + .seconds(10)) { $0 >= 1 ? () : nil } != nil)
        worker.wake()
        #expect(ends.wait(until: .now + .milliseconds(300)) { $0.isEmpty ? nil : () } == nil, "a wake ended the pause")
        let hurried = ContinuousClock.now
        worker.hurry()
        #expect(ends.wait(until: .now + .seconds(10)) { $0.count >= 1 ? () : nil } != nil)
        #expect(paused.wait(until: .now + .seconds(10)) { $0 >= 2 ? () : nil } != nil, "the round after a hurry")
        #expect(ContinuousClock.now - hurried < .seconds(5))
        worker.stop()
        worker.join()
        #expect(ends.read { $0 } == [true, false])
    }

    /// Wakes that come while a round runs make one more round, not one each.
    @Test func wakesDuringARoundMakeOneRound() {
        let worker = BackgroundWorker(name: "test.coalesce")
        let gate = ConditionLock<Bool>(false)
        let rounds = ConditionLock<Int>(0)
        worker.start { worker in
            while worker.next() != nil {
                rounds.withLock { $0 += 1 }
                _ = gate.wait(until: .now + .seconds(10)) { $0 ? () : nil }
            }
        }
        worker.wake()
        _ = rounds.wait(until: .now + .seconds(10)) { $0 >= 1 ? () : nil }
        for _ in 0..<5 { worker.wake() }
        gate.withLock { $0 = true }
        _ = rounds.wait(until: .now + .seconds(10)) { $0 >= 2 ? () : nil }
        worker.stop()
        worker.join()
        #expect(rounds.read { $0 } == 2)
    }

    /// A worker that never started joins at once; one joined from its own thread does not wait
    /// for itself.
    @Test func joinNeverWaitsForItself() {
        BackgroundWorker(name: "test.idle").join()
        let joined = ConditionLock<Bool?>(nil)
        let worker = BackgroundWorker(name: "test.self")
        worker.start { worker in joined.withLock { $0 = worker.join(until: .now + .seconds(10)) } }
        worker.join()
        #expect(joined.read { $0 } == true)
    }

    /// A wait with a deadline gives up at the deadline.
    @Test func aConditionWaitEndsAtItsDeadline() {
        let lock = ConditionLock<Int>(0)
        let started = ContinuousClock.now
        let value: Int? = lock.wait(until: .now + .milliseconds(50)) { $0 > 0 ? $0 : nil }
        #expect(value == nil)
        #expect(ContinuousClock.now - started >= .milliseconds(50))
    }

    /// Closing a database stops and joins its background thread at once (it used to run a last
    /// tick up to 250 ms later, with the store closed).
    @Test func closingADatabaseJoinsItsBackgroundThread() throws {
        let db = try makeDatabase(makeTemporaryDirectory())
        let started = ContinuousClock.now
        try db.close()
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(db.background.join(until: .now))
    }
}

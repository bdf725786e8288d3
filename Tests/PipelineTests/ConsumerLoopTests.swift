import Foundation
@testable import Pipeline
import Synchronization
import Testing

/// `ConsumerLoop`'s turn decision, without a broker: time and the outstanding work passed in.
@Suite("ConsumerLoop turns")
struct ConsumerLoopTests {
    @Test("a running loop polls whatever is outstanding")
    func runningPolls() {
        #expect(ConsumerLoop.turn(.running, nowMs: 0, outstanding: 0) == .poll)
        #expect(ConsumerLoop.turn(.running, nowMs: .max, outstanding: 7) == .poll)
    }

    @Test("a stopping loop drains until its work settles, then finishes with nothing unfinished")
    func stoppingDrainsThenFinishes() {
        let stopping = ConsumerLoop.Phase.stopping(deadlineMs: 1_000)
        #expect(ConsumerLoop.turn(stopping, nowMs: 10, outstanding: 3) == .drain)
        #expect(ConsumerLoop.turn(stopping, nowMs: 999, outstanding: 1) == .drain)
        #expect(ConsumerLoop.turn(stopping, nowMs: 500, outstanding: 0) == .finish(unfinished: 0))
    }

    @Test("at the drain deadline a stopping loop finishes and says what it leaves unfinished")
    func deadlineFinishesWithUnfinished() {
        let stopping = ConsumerLoop.Phase.stopping(deadlineMs: 1_000)
        #expect(ConsumerLoop.turn(stopping, nowMs: 1_000, outstanding: 4) == .finish(unfinished: 4))
        #expect(ConsumerLoop.turn(stopping, nowMs: 5_000, outstanding: 1) == .finish(unfinished: 1))
    }

    @Test("one asynchronous commit in flight: the next waits for its answer, or is sent again after 5 s without one")
    func oneCommitInFlight() {
        func due(_ now: Int64, inFlight: Int64?, force: Bool = false) -> Bool {
            CommitRoutine.isDue(force: force, nowMs: now, lastCommitMs: 1_000, inFlightSinceMs: inFlight, intervalMs: 100, resendAfterMs: 5_000)
        }
        #expect(!due(1_050, inFlight: nil), "within the interval")
        #expect(due(1_100, inFlight: nil), "the interval passed and none is in flight")
        #expect(!due(1_100, inFlight: 1_000), "the previous commit is still unanswered")
        #expect(!due(5_999, inFlight: 1_000))
        #expect(due(6_000, inFlight: 1_000), "unanswered for 5 s: sent again")
        #expect(due(1_001, inFlight: 1_000, force: true), "a forced (synchronous) commit always goes")
    }

    @Test("a loop's thread carries the first 15 bytes of its name, what the system keeps")
    func threadName() {
        final class Seen: Sendable { let name = Mutex("") }
        let seen = Seen(), thread = PollThread()
        thread.start(name: "requests-poll-and-more") {
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            seen.name.withLock { $0 = comm.trimmingCharacters(in: .newlines) }
        }
        thread.waitUntilFinished()
        #expect(seen.name.withLock { $0 } == "requests-poll-a")
    }
}

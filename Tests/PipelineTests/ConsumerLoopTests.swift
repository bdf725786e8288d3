@testable import Pipeline
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
}

import Dispatch
import Foundation
@testable import Pipeline
import Synchronization
import Testing

/// The reusable timer behind the scheduler and the reconciliation runner: however `schedule`
/// calls interleave, it fires for the earliest deadline asked for.
@Suite("DispatchTimer arms for the earliest deadline", .timeLimit(.minutes(5)))
struct DispatchTimerTests {
    static func nowMs() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Forces the interleaving that would leave the timer late without arming under the lock: a call for a late deadline
    /// records it, then pauses just before arming the source (through the `willArm` seam); a call
    /// for an early deadline runs meanwhile. Arming under the lock makes the early call wait for
    /// the late one and arm last, so the timer fires early, as `armedAt` says. (The pause is shorter
    /// than the early delay: otherwise the early arming fires before the late one can override it.)
    @Test("a late schedule paused before arming cannot override an earlier one", .timeLimit(.minutes(1)))
    func pausedLateScheduleDoesNotWin() {
        for round in 0..<5 {
            let now = Self.nowMs()
            let early = now + 500, late = now + 5_000
            let lateIsArming = DispatchSemaphore(value: 0)
            let fired = DispatchSemaphore(value: 0)
            let timer = DispatchTimer(label: "timer-race-\(round)") { atMs, _ in
                guard atMs == late else { return }
                lateIsArming.signal()
                usleep(150_000)
            }
            timer.setHandler { fired.signal() }
            DispatchQueue.global().async { timer.schedule(atMs: late, nowMs: now) }
            lateIsArming.wait()
            timer.schedule(atMs: early, nowMs: now)
            let result = fired.wait(timeout: .now() + .milliseconds(2_000))
            timer.cancel()
            #expect(result == .success, "round \(round): the timer did not fire for the early deadline (armed late)")
        }
    }

    /// Many threads asking for different deadlines at once, many times: the timer fires no later
    /// than the earliest one plus slack.
    @Test("concurrent schedules with different deadlines fire by the earliest", .timeLimit(.minutes(2)))
    func concurrentSchedulesFireByTheEarliest() {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<30 {
            let now = Self.nowMs()
            let deadlines = (0..<8).map { _ in now + Int64.random(in: 50...1_500, using: &generator) }
            let earliest = deadlines.min()!
            let firedAt = Mutex<Int64?>(nil)
            let fired = DispatchSemaphore(value: 0)
            let timer = DispatchTimer(label: "timer-concurrent-\(round)")
            timer.setHandler {
                firedAt.withLock { $0 = $0 ?? Self.nowMs() }
                fired.signal()
            }
            DispatchQueue.concurrentPerform(iterations: deadlines.count) { index in
                timer.schedule(atMs: deadlines[index], nowMs: now)
            }
            let result = fired.wait(timeout: .now() + .milliseconds(Int(earliest - now) + 1_000))
            timer.cancel()
            #expect(result == .success, "round \(round): not fired within 1 s of the earliest deadline")
            if let at = firedAt.withLock({ $0 }) {
                #expect(at <= earliest + 1_000, "round \(round): fired \(at - earliest) ms after the earliest deadline")
            }
        }
    }
}

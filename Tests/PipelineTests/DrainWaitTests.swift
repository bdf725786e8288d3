import Dispatch
import Kafka
import Synchronization
import Testing
@testable import Pipeline

/// `DrainWait`, the revoke drain's wait (no polling): it returns when the work it watches ends,
/// and gives up at its time limit.
@Suite("DrainWait", .timeLimit(.minutes(1)))
struct DrainWaitTests {
    final class Work: Sendable {
        let left = Mutex(0)
        let drain = DrainWait()
        func finishOne() {
            left.withLock { $0 -= 1 }
            drain.wake()
        }
        var isDrained: Bool { left.withLock { $0 == 0 } }
    }

    @Test("returns at once when nothing is left, and when the last piece of work ends")
    func returnsWhenDrained() {
        let work = Work()
        #expect(work.drain.wait(timeoutMs: 0) { work.isDrained })
        work.left.withLock { $0 = 3 }
        for delay in [10, 20, 30] {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(delay)) { work.finishOne() }
        }
        // A generous limit: the wait ends when the work does, not at the limit.
        let started = DispatchTime.now()
        #expect(work.drain.wait(timeoutMs: 30_000) { work.isDrained })
        #expect(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds < 20_000_000_000)
    }

    @Test("gives up at its limit while work is left, and says so")
    func givesUpAtTheLimit() {
        let work = Work()
        work.left.withLock { $0 = 1 }
        #expect(!work.drain.wait(timeoutMs: 50) { work.isDrained })
        // A wake with nothing waiting is harmless.
        work.finishOne()
        #expect(work.drain.wait(timeoutMs: 0) { work.isDrained })
    }

    @Test("the offset ledger's drain ends when the revoked partition's last offset settles")
    func ledgerDrain() {
        let ledger = OffsetLedger()
        let partition = TopicPartition(topic: "provisioning.requests", partition: 0)
        let generation = ledger.assign(partition, markerPosition: nil)
        #expect(ledger.track(partition, offset: 0) == generation)
        #expect(ledger.track(partition, offset: 1) == generation)
        ledger.revoke([partition])
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) {
            ledger.complete(partition, offset: 0, generation: generation)
            ledger.abandon(partition, offset: 1, generation: generation)
        }
        #expect(ledger.waitUntilSettled([partition], timeoutMs: 30_000) == 0)
    }
}

import Dispatch
import Synchronization

/// Lets a thread wait, without polling, until work it watches has drained (a revoke's drain, in
/// `OffsetLedger.waitUntilSettled`: no offset of the revoked partitions unsettled), up to a time
/// limit. The side that finishes work calls `wake` after each change; the waiter re-checks its
/// condition then. Any thread may call either.
final class DrainWait: Sendable {
    private let waiters = Mutex<[DispatchSemaphore]>([])

    /// Blocks until `isDrained` holds or `timeoutMs` has passed; whether it holds at the end.
    func wait(timeoutMs: Int64, until isDrained: () -> Bool) -> Bool {
        let deadline = DispatchTime.now() + .milliseconds(Int(max(0, timeoutMs)))
        while !isDrained() {
            let semaphore = DispatchSemaphore(value: 0)
            waiters.withLock { $0.append(semaphore) }
            // Checked again once registered: a wake between the first check and now is not lost.
            if isDrained() { break }
            if semaphore.wait(timeout: deadline) == .timedOut {
                waiters.withLock { $0.removeAll { $0 === semaphore } }
                return isDrained()
            }
        }
        return true
    }

    /// Wakes every waiter to check its condition again (cheap when nobody waits).
    func wake() {
        let woken = waiters.withLock { waiters -> [DispatchSemaphore] in
            defer { waiters.removeAll() }
            return waiters
        }
        for semaphore in woken { semaphore.signal() }
    }
}

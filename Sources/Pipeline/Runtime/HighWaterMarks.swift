import Synchronization

/// The most the worker has held at once since it started: issuer calls in flight (in all and per
/// program), tickets queued for a call, requests received and not yet settled, and reconciliation
/// jobs held by one reconcile partition. Recorded where
/// the counts change (under the scheduler's and the ledger's locks), so no peak between two
/// scrapes is missed; exported as `provisioner_*_high_water` gauges.
final class HighWaterMarks: Sendable {
    /// The peaks.
    struct Marks: Sendable, Equatable {
        var inFlight = 0
        var queued = 0
        var unsettled = 0
        var inFlightPerProgram: [String: Int] = [:]
        /// Most reconciliation jobs held by one reconcile partition.
        var reconcileHeldPerPartition = 0
    }

    private let marks = Mutex(Marks())

    /// Records the scheduler's counts after a change.
    func recordScheduler(running: Int, queued: Int, perProgram: [String: Int]) {
        marks.withLock { marks in
            marks.inFlight = max(marks.inFlight, running)
            marks.queued = max(marks.queued, queued)
            for (program, count) in perProgram where count > (marks.inFlightPerProgram[program] ?? 0) {
                marks.inFlightPerProgram[program] = count
            }
        }
    }

    /// Records the number of unsettled requests after one more was received.
    func recordUnsettled(_ count: Int) {
        marks.withLock { $0.unsettled = max($0.unsettled, count) }
    }

    /// Records the jobs one reconcile partition holds after one more was held.
    func recordReconcileHeld(_ count: Int) {
        marks.withLock { $0.reconcileHeldPerPartition = max($0.reconcileHeldPerPartition, count) }
    }

    /// The peaks so far.
    var current: Marks { marks.withLock { $0 } }
}

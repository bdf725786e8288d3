import Foundation
import Pipeline

/// Runs seeded schedules of the deterministic simulation (`SimulationRun`), each single-threaded
/// and independent of the others, on `lanes` threads; sums what they found.
public enum SimulationBatch {
    /// What a batch found.
    public struct Summary: Sendable {
        /// Schedules whose promises broke, by seed.
        public var failed: [SimulationReport] = []
        /// Schedules run.
        public var schedules = 0
        /// Requests, issuer calls, answered requests, identical duplicate finals, dead letters, events (summed).
        public var requests = 0, calls = 0, finals = 0, identical = 0, deadLetters = 0, events = 0
        /// How often each path ran.
        public var coverage = SimulationCoverage()

        mutating func add(_ report: SimulationReport) {
            add(Summary(failed: report.violations.isEmpty ? [] : [report], schedules: 1, requests: report.requests, calls: report.calls,
                        finals: report.finals, identical: report.identicalDuplicates, deadLetters: report.deadLetters, events: report.events,
                        coverage: report.coverage))
        }

        mutating func add(_ other: Summary) {
            schedules += other.schedules
            requests += other.requests
            calls += other.calls
            finals += other.finals
            identical += other.identical
            deadLetters += other.deadLetters
            events += other.events
            coverage.add(other.coverage)
            failed += other.failed
        }
    }

    /// Runs `seeds` (with `mutation` put back, if any); `tracing` keeps each run's event trace;
    /// `stopAtFirstFailure` ends the batch once a seed failed (the seeds after it on other lanes
    /// may still finish).
    public static func run(_ seeds: [UInt64], mutation: SimulationMutation? = nil, tracing: Bool = false,
                           stopAtFirstFailure: Bool = false, lanes: Int = 2) -> Summary {
        let lanes = max(1, min(lanes, seeds.count))
        let parts = (0..<lanes).map { _ in Lane() }
        let mutations = mutation?.coreMutations ?? CoreMutations()
        @Sendable func runLane(_ lane: Int) {
            for (index, seed) in seeds.enumerated() where index % lanes == lane {
                if stopAtFirstFailure && parts.contains(where: \.hasFailed) { break }
                parts[lane].add(SimulationRun(seed: seed, mutations: mutations, tracing: tracing).run())
            }
        }
        // Lanes after the first run on threads of their own, not on Dispatch's global queues: on
        // Linux those threads also run Swift's tasks, and a lane holds its thread for the whole
        // batch (minutes), so every task beside it would wait.
        let finished = DispatchGroup()
        for lane in 1..<lanes {
            finished.enter()
            Thread {
                runLane(lane)
                finished.leave()
            }.start()
        }
        runLane(0)
        finished.wait()
        var total = Summary()
        for part in parts { total.add(part.summary) }
        total.failed.sort { $0.seed < $1.seed }
        return total
    }

    /// One lane's summary, read by the others (whether it failed).
    private final class Lane: @unchecked Sendable {
        private let lock = NSLock()
        private var value = Summary()

        var summary: Summary { lock.withLock { value } }
        var hasFailed: Bool { lock.withLock { !value.failed.isEmpty } }

        func add(_ report: SimulationReport) { lock.withLock { value.add(report) } }
    }
}

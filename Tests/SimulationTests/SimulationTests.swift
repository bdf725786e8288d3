import CoreSimulation
import Foundation
import Testing
import TestSupport

/// The deterministic simulation of the worker's real core (`CoreSimulation`), as a test: seeded
/// schedules of three or four workers over a simulated cluster, each checked for the
/// exactly-one-answer promises and every final against the simulated issuer's truth, and the
/// self-test that each fix put back is found. CI runs the
/// full 10,000 schedules with the release build (`provisioner simulate`, the `simulation` phase
/// of `scripts/test`); this debug-build test runs `SIMULATION_SEEDS` (default 200) from
/// `SIMULATION_FIRST_SEED` (default 1). A failure prints its seed, settings and what broke;
/// `scripts/simulate SEED` replays it with its trace. Each batch runs on one thread of its own at the
/// lowest priority: seconds of CPU-bound work on the test run's few task threads, or beside them at
/// the same priority (nine batches on two cores), would hold up every suite running in parallel.
@Suite("Simulation")
struct SimulationTests {
    @Test("every seeded schedule keeps the promises: one call per handshake, one true final per request, commits forward, gate before intake")
    func schedules() async {
        let environment = ProcessInfo.processInfo.environment
        let first = environment["SIMULATION_FIRST_SEED"].flatMap(UInt64.init) ?? 1
        let count = environment["SIMULATION_SEEDS"].flatMap(UInt64.init) ?? 200
        let summary = await DedicatedThread.runInBackground(name: "simulation") {
            SimulationBatch.run(Array(first..<(first + count)), lanes: 1)
        }
        print("simulation: \(summary.schedules) schedules, \(summary.failed.count) failed; \(summary.requests) requests, "
              + "\(summary.calls) issuer calls, \(summary.finals) answered, \(summary.identical) identical duplicate finals")
        for report in summary.failed.prefix(3) {
            let violations = report.violations.prefix(10).joined(separator: "\n")
            Issue.record("seed \(report.seed) broke a promise (replay: scripts/simulate \(report.seed))\nsettings: \(report.settings)\n\(violations)")
        }
        #expect(summary.failed.count == 0, "failing seeds: \(summary.failed.prefix(20).map(\.seed))")
        #expect(summary.requests > 0 && summary.calls > 0 && summary.finals > 0, "the schedules exercised nothing")
    }

    /// Pinned scenarios (fixed steps, not seeds) of defects seeds once found: each keeps every
    /// promise, and breaks one with its fix put back, so the fix stays tested when the random
    /// schedules move.
    @Test("each pinned scenario keeps the promises, and breaks one with its fix put back", arguments: SimulationScenario.allCases)
    func pinnedScenario(_ scenario: SimulationScenario) async {
        let (fixed, reverted) = await DedicatedThread.runInBackground(name: "simulation") {
            (scenario.run(), scenario.run(mutation: scenario.mutation))
        }
        #expect(fixed.violations.isEmpty, "\(scenario.rawValue) (\(scenario.summary)) broke a promise:\n\(fixed.violations.prefix(10).joined(separator: "\n"))")
        #expect(fixed.requests >= 2 && fixed.calls >= 2 && fixed.finals >= fixed.requests,
                "\(scenario.rawValue) exercised nothing: \(fixed.requests) requests, \(fixed.calls) calls, \(fixed.finals) finals")
        #expect(!reverted.violations.isEmpty, "\(scenario.rawValue) did not notice \(scenario.mutation.summary)")
    }

    /// A fix too rare for random schedules to find again is guarded by a pinned scenario instead.
    @Test("every fix with no seed budget has a pinned scenario that puts it back")
    func seedlessMutationsHaveScenarios() {
        let guarded = Set(SimulationScenario.allCases.map(\.mutation))
        let unguarded = SimulationMutation.allCases.filter { $0.seedBudget == nil && !guarded.contains($0) }
        #expect(unguarded.isEmpty, "no scenario guards: \(unguarded.map(\.rawValue))")
    }

    /// The mutations caught within 2,000 schedules; the rest (larger budgets) run in the release
    /// build's self-test (`scripts/simulate`, the `simulation` phase).
    @Test("the simulation finds each fix put back within 2,000 schedules",
          arguments: SimulationMutation.allCases.filter { ($0.seedBudget ?? .max) <= 2_000 })
    func findsRevertedFix(_ mutation: SimulationMutation) async {
        let summary = await DedicatedThread.runInBackground(name: "simulation") {
            SimulationBatch.run(Array(1...2_000), mutation: mutation, stopAtFirstFailure: true, lanes: 1)
        }
        let first = summary.failed.first
        print("simulation with \(mutation.summary): first failing seed \(first.map { String($0.seed) } ?? "none") "
              + "(\(summary.schedules) schedules run): \(first?.violations.first ?? "-")")
        #expect(first != nil, "no schedule in 2,000 caught: \(mutation.summary)")
    }
}

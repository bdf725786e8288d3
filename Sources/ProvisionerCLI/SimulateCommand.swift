import CoreSimulation
import Foundation

/// `provisioner simulate`: the deterministic simulation of the worker's real core
/// (`CoreSimulation`): seeded schedules, each checked for the exactly-one-answer promises; one
/// seed replayed with its event trace; or the self-test that each fix put back is found.
enum SimulateCommand: Command {
    static let name = "simulate"
    static let summary = "runs seeded schedules of several workers' real core over a simulated cluster and checks every promise"
    static let switchNames: Set<String> = ["trace", "self-test"]
    /// From this many schedules on, a batch fails when a required path (`SimulationCoverage`) never ran.
    static let coverageSeeds = 1_000
    static let help = """
        usage: provisioner simulate [--seeds N] [--first-seed S] [--lanes L]
               provisioner simulate --seed S [--trace] [--mutation M]
               provisioner simulate --scenario NAME [--trace] [--mutation M]
               provisioner simulate --self-test [--seeds N]

        Runs the worker's real core (consumer loops, partition lifecycle, intake, scheduler, call,
        settlement, fencing, decisions, reconciliation) for three or four workers in one process,
        single-threaded and seeded, over a simulated Kafka cluster (cooperative or eager groups,
        commits, produce acknowledgements), a stateful issuer and a virtual clock, with faults drawn
        from the seed (kill -9, members evicted while they work on, joins, graceful leaves, produce
        errors that may or may not have written, slow or missing acknowledgements, unreadable
        markers partitions, issuer calls longer than the revoke drain, seeks that fail, clocks off
        by up to a second, signed requests copied to another partition, the issuers' state
        queries down for seconds, operators replaying dead letters). The workload: Apple Pay
        on Imprint, DCS and Gnosis Pay, Google Wallet on Imprint and DCS, Legacy Google Pay on Imprint,
        Worldpay payments and their settle, partial settle or cancel, signed and unsigned programs,
        reply routes. After each schedule it checks: a handshake (a payment's reference), and a
        request, reached the issuer at most once; every request got a final result (or a
        dead letter) by its deadline plus the reconciliation tiers; no request got two different
        finals; every first final is true to what the simulated issuer did; every result went to
        the request's reply route; no message that failed its signature check was answered; no
        group's committed offset moved backwards; no record reached intake before its
        assignment's marker catch-up. Exit 0 when every schedule kept them.

          --seeds N        schedules to run (default 10000), from --first-seed (default 1)
          --lanes L        threads (default 2; each schedule is single-threaded)
          --seed S         one schedule; --trace prints its event trace
          --scenario NAME  one pinned scenario (fixed steps of a defect a seed once found): \(SimulationScenario.allCases.map(\.rawValue).joined(separator: ", "))
          --mutation M     put a fix back (see --self-test for the list) to see the simulation catch it
          --self-test      each fix put back in turn must make a schedule fail within --seeds (default: its own budget),
                           and each pinned scenario keep every promise and fail with its own fix put back

        Set SWIFT_DETERMINISTIC_HASHING=1 (scripts/simulate does) so a seed replays the same
        schedule in every process.
        """

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        let trace = arguments.flag("trace")
        let selfTest = arguments.flag("self-test")
        let one = try arguments.option("seed").map { text throws(UsageError) -> UInt64 in
            guard let seed = UInt64(text) else { throw UsageError("--seed takes a whole number") }
            return seed
        }
        let mutation = try arguments.option("mutation").map { text throws(UsageError) -> SimulationMutation in
            guard let mutation = SimulationMutation(rawValue: text) else { throw UsageError("--mutation is one of " + SimulationMutation.allCases.map(\.rawValue).joined(separator: ", ")) }
            return mutation
        }
        let scenario = try arguments.option("scenario").map { text throws(UsageError) -> SimulationScenario in
            guard let scenario = SimulationScenario(rawValue: text) else { throw UsageError("--scenario is one of " + SimulationScenario.allCases.map(\.rawValue).joined(separator: ", ")) }
            return scenario
        }
        let seedsGiven = arguments.option("seeds") != nil
        let count = try arguments.integer("seeds", default: 10_000, in: 1...10_000_000)
        let first = try arguments.integer("first-seed", default: 1, in: 0...Int.max / 2)
        let lanes = try arguments.integer("lanes", default: 2, in: 1...64)
        try arguments.rejectUnknown()
        if selfTest { return selfTestRun(count: seedsGiven ? count : nil, lanes: lanes) }
        if let scenario {
            let report = scenario.run(mutation: mutation, tracing: trace)
            if trace { report.trace.forEach { print($0) } }
            guard report.violations.isEmpty else {
                print("scenario \(scenario.rawValue) broke a promise (\(scenario.summary))")
                report.violations.forEach { print("  \($0)") }
                return 1
            }
            print("scenario \(scenario.rawValue): every promise kept (\(report.requests) requests, \(report.calls) issuer calls, \(report.events) events)")
            return 0
        }
        if let one {
            let summary = SimulationBatch.run([one], mutation: mutation, tracing: trace, lanes: 1)
            guard let report = summary.failed.first else {
                print("seed \(one): every promise kept (\(summary.requests) requests, \(summary.calls) issuer calls, \(summary.events) events)")
                return 0
            }
            if trace { report.trace.forEach { print($0) } }
            print("seed \(one) broke a promise\nsettings: \(report.settings)")
            report.violations.forEach { print("  \($0)") }
            return 1
        }
        let seeds = (0..<count).map { UInt64(first + $0) }
        let started = Date()
        let summary = SimulationBatch.run(seeds, mutation: mutation, lanes: lanes)
        let seconds = Date().timeIntervalSince(started)
        print("simulation: \(summary.schedules) schedules in \(String(format: "%.1f", seconds)) s "
              + "(\(Int(Double(summary.schedules) / max(seconds, 0.001))) per second), \(summary.failed.count) failed; "
              + "\(summary.requests) requests, \(summary.calls) issuer calls, \(summary.finals) answered, "
              + "\(summary.identical) identical duplicate finals, \(summary.deadLetters) dead-lettered, \(summary.events) events")
        if !summary.failed.isEmpty { print("failing seeds: \(summary.failed.map(\.seed))") }
        for report in summary.failed.prefix(5) {
            print("seed \(report.seed) broke a promise (replay: scripts/simulate \(report.seed))\n  settings: \(report.settings)")
            report.violations.prefix(5).forEach { print("  \($0)") }
        }
        print("paths taken (times, over every schedule):")
        summary.coverage.table.forEach { print("  \($0)") }
        // A batch that finds nothing must show it ran every path worth testing; a small batch may miss some.
        let missing = count >= Self.coverageSeeds ? summary.coverage.missing : []
        if !missing.isEmpty { print("paths never taken in \(count) schedules: \(missing.joined(separator: "; "))") }
        return summary.failed.isEmpty && missing.isEmpty ? 0 : 1
    }

    /// Each fix put back must make some schedule fail within `count` seeds (its own budget when nil).
    private static func selfTestRun(count: Int?, lanes: Int) -> Int32 {
        var missed = 0
        for mutation in SimulationMutation.allCases {
            // Too rare for random schedules: its pinned scenario (run below) must catch it.
            guard let ownBudget = mutation.seedBudget else {
                let scenarios = SimulationScenario.allCases.filter { $0.mutation == mutation }.map(\.rawValue)
                if scenarios.isEmpty { missed += 1 }
                print("\(mutation.summary): \(scenarios.isEmpty ? "NO pinned scenario guards it" : "guarded by scenario " + scenarios.joined(separator: ", "))")
                continue
            }
            let started = Date()
            let budget = count ?? ownBudget
            let summary = SimulationBatch.run((1...budget).map(UInt64.init), mutation: mutation, stopAtFirstFailure: true, lanes: lanes)
            let seconds = String(format: "%.1f", Date().timeIntervalSince(started))
            if let first = summary.failed.first {
                print("\(mutation.summary): caught by seed \(first.seed) (\(summary.schedules) schedules, \(seconds) s): \(first.violations.first ?? "")")
            } else {
                missed += 1
                print("\(mutation.summary): NOT caught in \(budget) schedules")
            }
        }
        for scenario in SimulationScenario.allCases {
            let kept = scenario.run().violations.isEmpty
            let caught = !scenario.run(mutation: scenario.mutation).violations.isEmpty
            if !kept || !caught { missed += 1 }
            print("scenario \(scenario.rawValue): \(kept ? "every promise kept" : "BROKE A PROMISE"); with \(scenario.mutation.rawValue): \(caught ? "caught" : "NOT caught")")
        }
        return missed == 0 ? 0 : 1
    }
}

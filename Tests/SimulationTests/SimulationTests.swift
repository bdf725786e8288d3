import Foundation
import Testing

/// The deterministic simulation of the worker's core (`Simulation`): thousands of seeded
/// schedules of several workers over a simulated cluster, each checked for the exactly-one-answer
/// promises. A failure prints its seed, settings, what broke and the event trace;
/// `scripts/simulate SEED` replays one seed with its trace.
///
/// `SIMULATION_SEEDS` (default 10,000) schedules from `SIMULATION_FIRST_SEED` (default 1);
/// `SIMULATION_SEED` runs that one seed only, tracing every event.
@Suite("Simulation")
struct SimulationTests {
    @Test("every seeded schedule keeps the promises: one call per handshake, one final per request, commits forward, gate before intake")
    func schedules() {
        let environment = ProcessInfo.processInfo.environment
        let seeds: [UInt64]
        if let one = environment["SIMULATION_SEED"].flatMap(UInt64.init) {
            seeds = [one]
        } else {
            let first = environment["SIMULATION_FIRST_SEED"].flatMap(UInt64.init) ?? 1
            let count = environment["SIMULATION_SEEDS"].flatMap(UInt64.init) ?? 10_000
            seeds = Array(first..<(first + count))
        }
        let tracing = seeds.count == 1
        let started = Date()
        var failed = 0, events = 0, requests = 0, calls = 0, duplicates = 0, refused = 0
        for seed in seeds {
            let report = Simulation(seed: seed, tracing: tracing).run()
            events += report.events
            requests += report.requests
            calls += report.calls
            duplicates += report.identicalDuplicates
            refused += report.refused
            guard !report.violations.isEmpty else { continue }
            failed += 1
            if failed <= 3 {
                let trace = report.trace.suffix(400).joined(separator: "\n")
                Issue.record("""
                    seed \(report.seed) broke a promise (replay: scripts/simulate \(report.seed))
                    settings: \(report.settings)
                    \(report.violations.prefix(10).joined(separator: "\n"))
                    trace (last 400 events):
                    \(trace)
                    """)
            }
        }
        let seconds = Date().timeIntervalSince(started)
        print("simulation: \(seeds.count) schedules in \(String(format: "%.1f", seconds)) s "
              + "(\(Int(Double(seeds.count) / max(seconds, 0.001)))/s), \(failed) failed; \(requests) requests, \(calls) issuer calls, "
              + "\(duplicates) identical duplicate finals, \(refused) records refused by the gate, \(events) events")
        #expect(failed == 0)
        // The runs must have exercised something: requests, calls and the gate.
        #expect(requests > 0 && calls > 0)
    }
}

import Contract
import Foundation
import ProvisionerCLI

/// `bench isolation`: two programs on two issuers (Imprint healthy, DCS the one that fails).
/// The healthy program's throughput and p99 with the other issuer healthy, then hanging, side by
/// side; with the DCS program's answers (breaker refusals, timeouts, expiries).
enum IsolationBenchmark {
    /// Options.
    struct Options: BenchOptions {
        /// Requests per second to the healthy program (Imprint).
        var healthyRate = 400
        /// Requests per second to the failing program (DCS).
        var failingRate = 100
        /// Seconds per phase.
        var seconds = 15
        /// Partitions per topic.
        var partitions = 6
        /// Reads the options given.
        mutating func read(_ arguments: inout CommandArguments) throws {
            healthyRate = try arguments.rate("healthy-rate", default: healthyRate)
            failingRate = try arguments.rate("failing-rate", default: failingRate)
            seconds = try arguments.seconds(default: seconds)
            partitions = try arguments.partitions(default: partitions)
        }
    }

    static let normal = #"{"distribution": "uniform", "min_ms": 20, "max_ms": 60}"#

    /// Runs both phases.
    static func run(_ options: Options, progress: @escaping (String) -> Void) throws -> BenchmarkReport {
        let rig = try BenchRig(partitions: options.partitions, profile: PipelineBench.profile(latency: normal),
                               groupID: "bench-isolation") { document in
            PipelineBench.tune(&document, maxInFlight: 512, maxPending: 4_096)
            var programs = document["programs"]?.objectValue ?? [:]
            var dcs = programs["demo-dcs"]?.objectValue ?? [:]
            dcs["max_in_flight"] = .integer(64)
            programs["demo-dcs"] = .object(dcs)
            document["programs"] = .object(programs)
        }
        defer { rig.stop() }
        let (stack, factory, phase) = (rig.stack, rig.factory, rig.phase)

        func mixed(_ label: String) throws -> [RequestPool.Item] {
            let healthy = try RequestPool.make(options.healthyRate * options.seconds, mix: .applePay(program: "demo-imprint"),
                                               factory: factory, cardPrefix: "\(label)-imprint")
            let failing = try RequestPool.make(options.failingRate * options.seconds, mix: .googleWallet(program: "demo-dcs"),
                                               factory: factory, cardPrefix: "\(label)-dcs")
            var items: [RequestPool.Item] = []
            let ratio = max(1, options.healthyRate / max(1, options.failingRate))
            var failingIterator = failing.makeIterator()
            for (index, item) in healthy.enumerated() {
                items.append(item)
                if index % ratio == ratio - 1, let next = failingIterator.next() { items.append(next) }
            }
            while let next = failingIterator.next() { items.append(next) }
            return items
        }
        let rate = Double(options.healthyRate + options.failingRate)
        progress("phase 1: both issuers healthy")
        let before = phase.observe(try mixed("healthy"), rate: rate)
        progress("phase 2: DCS hangs (every call), Imprint healthy")
        var hanging = PipelineBench.profile(latency: normal).objectValue ?? [:]
        hanging["issuers"] = .object(["dcs": .object(["latency": .object(["distribution": .string("fixed"), "ms": .integer(20)]),
                                                     "hang_rate": .integer(1)])])
        try stack.replaceProfile(.object(hanging))
        let during = phase.observe(try mixed("hanging"), rate: rate, drainTimeoutMs: 120_000)
        let breakerChanges = Int(stack.metricTotal("provisioner_breaker_transitions_total"))

        func split(_ observation: BenchPhase.Observation) -> (BenchPhase.Figures, BenchPhase.Figures) {
            (observation.figures { observation.items[$0].program == "demo-imprint" }, observation.figures { observation.items[$0].program == "demo-dcs" })
        }
        let (healthyBefore, failingBefore) = split(before)
        let (healthyDuring, failingDuring) = split(during)
        func statuses(_ figures: BenchPhase.Figures) -> String {
            figures.statuses.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
        }
        let rows = [
            ["Imprint (healthy)", "DCS healthy", PipelineBench.figure(healthyBefore.achievedPerSecond), PipelineBench.ms(healthyBefore.latency(0.5)),
             PipelineBench.ms(healthyBefore.latency(0.99)), String(healthyBefore.lateResults), statuses(healthyBefore)],
            ["Imprint (healthy)", "DCS hanging", PipelineBench.figure(healthyDuring.achievedPerSecond), PipelineBench.ms(healthyDuring.latency(0.5)),
             PipelineBench.ms(healthyDuring.latency(0.99)), String(healthyDuring.lateResults), statuses(healthyDuring)],
            ["DCS", "DCS healthy", PipelineBench.figure(failingBefore.achievedPerSecond), PipelineBench.ms(failingBefore.latency(0.5)),
             PipelineBench.ms(failingBefore.latency(0.99)), String(failingBefore.lateResults), statuses(failingBefore)],
            ["DCS", "DCS hanging", PipelineBench.figure(failingDuring.achievedPerSecond), PipelineBench.ms(failingDuring.latency(0.5)),
             PipelineBench.ms(failingDuring.latency(0.99)), String(failingDuring.lateResults), statuses(failingDuring)],
        ]
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("scenario"); writer.string("isolation")
        for (name, figures) in [("healthy_before", healthyBefore), ("healthy_during", healthyDuring), ("failing_before", failingBefore),
                                ("failing_during", failingDuring)] {
            writer.key(name); writer.beginObject()
            writer.key("per_second"); writer.integer(Int64(figures.achievedPerSecond))
            writer.key("p50_ms"); writer.integer(orNull: figures.latency(0.5))
            writer.key("p99_ms"); writer.integer(orNull: figures.latency(0.99))
            writer.key("results_after_deadline"); writer.integer(Int64(figures.lateResults))
            writer.endObject()
        }
        writer.key("breaker_transitions"); writer.integer(Int64(breakerChanges))
        writer.endObject()
        return BenchmarkReport(
            title: "isolation: Imprint \(options.healthyRate)/s + DCS \(options.failingRate)/s, \(options.seconds) s per phase; DCS bulkhead 64 calls, default breaker",
            columns: ["PROGRAM", "PHASE", "ANSWERED/S", "P50 MS", "P99 MS", "LATE", "FINAL STATUSES"], rows: rows,
            notes: ["circuit breaker transitions during the run: \(breakerChanges)", PipelineBench.machine],
            json: writer.text)
    }
}

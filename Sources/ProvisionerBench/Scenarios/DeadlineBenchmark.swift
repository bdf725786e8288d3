import Contract
import Foundation
import ProvisionerCLI

/// `bench deadline`: a heavy-tailed issuer (most calls fast, a few percent far beyond the 20 s
/// Apple window) at about twice what the worker can serve. Counts results published after their
/// deadline (must be 0), expired and served, for the deadline-aware worker and, in the same run,
/// a FIFO setting of the same worker (arrival order, no shedding, fixed issuer timeouts).
enum DeadlineBenchmark {
    /// Options.
    struct Options: BenchOptions {
        /// The load offered: about twice the worker's capacity with the defaults (256 slots /
        /// (0.97 × ~0.17 s + 0.03 × 10 s program timeout) ≈ 550/s).
        var load = OpenLoad(rate: 1_100, seconds: 30)
        /// Calls in flight the worker allows.
        var maxInFlight = 256
        /// Reads the options given.
        mutating func read(_ arguments: inout CommandArguments) throws {
            try load.read(&arguments)
            maxInFlight = try arguments.maxInFlight(default: maxInFlight)
        }
    }

    static let heavyTail = #"{"distribution": "lognormal", "median_ms": 150, "sigma": 0.6, "max_ms": 30000}"#

    /// Runs both settings and reports them side by side.
    static func run(_ options: Options, progress: @escaping (String) -> Void) throws -> BenchmarkReport {
        var results: [(String, BenchPhase.Figures)] = []
        for ordering in ["edf", "fifo"] {
            progress("\(ordering == "edf" ? "deadline-aware (EDF)" : "FIFO baseline"): \(options.load.rate)/s for \(options.load.seconds) s, 3% of calls take 25 s")
            let profile = PipelineBench.profile(latency: heavyTail)
            var document = profile.objectValue ?? [:]
            var all = document["all"]?.objectValue ?? [:]
            all["tail"] = .object(["probability": .number(JSONNumber(literal: "0.03")!), "latency_ms": .integer(25_000)])
            document["all"] = .object(all)
            let rig = try BenchRig(partitions: options.load.partitions, profile: .object(document), groupID: "bench-deadline-\(ordering)") {
                PipelineBench.tune(&$0, maxInFlight: options.maxInFlight, maxPending: options.maxInFlight * 4, ordering: ordering)
            }
            defer { rig.stop() }
            let (factory, phase) = (rig.factory, rig.phase)
            let items = try RequestPool.make(options.load.rate * options.load.seconds, mix: .applePay(program: "demo-imprint"), factory: factory)
            let figures = phase.run(items, rate: Double(options.load.rate), drainTimeoutMs: 180_000)
            results.append((ordering, figures))
            progress("  late \(figures.lateResults), expired \(figures.firstStatuses[.expired] ?? 0), provisioned \(figures.firstStatuses[.provisioned] ?? 0)")
        }
        func first(_ figures: BenchPhase.Figures, _ status: ResultStatus) -> String { String(figures.firstStatuses[status] ?? 0) }
        let rows = results.map { ordering, figures in
            [ordering == "edf" ? "deadline-aware" : "FIFO baseline", String(figures.sent), String(figures.lateResults),
             first(figures, .provisioned), first(figures, .expired), first(figures, .indeterminate),
             PipelineBench.ms(figures.latency(0.5)), PipelineBench.ms(figures.latency(0.99))]
        }
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("scenario"); writer.string("deadline")
        writer.key("rate"); writer.integer(Int64(options.load.rate))
        for (ordering, figures) in results {
            writer.key(ordering); writer.beginObject()
            writer.key("sent"); writer.integer(Int64(figures.sent))
            writer.key("results_after_deadline"); writer.integer(Int64(figures.lateResults))
            for status in [ResultStatus.provisioned, .expired, .indeterminate, .failed] {
                writer.key("first_\(status.rawValue)"); writer.integer(Int64(figures.firstStatuses[status] ?? 0))
            }
            writer.key("p99_ms"); writer.integer(orNull: figures.latency(0.99))
            writer.endObject()
        }
        writer.endObject()
        return BenchmarkReport(
            title: "deadline: Apple Pay at \(options.load.rate)/s for \(options.load.seconds) s; issuer log-normal (median 150 ms) with 3% at 25 s; \(options.maxInFlight) calls in flight",
            columns: ["WORKER", "SENT", "AFTER DEADLINE", "PROVISIONED", "EXPIRED", "TIMED OUT", "P50 MS", "P99 MS"],
            rows: rows,
            notes: [
                "after deadline: first results published later than deadline − 1 s margin, for requests that arrived in time (must be 0)",
                "FIFO baseline: arrival order, no admission control or shedding, issuer timeout 10 s regardless of the deadline",
                "statuses are first answers: expired = shed before calling; timed out = indeterminate inside the window, then reconciled",
                PipelineBench.machine,
            ],
            json: writer.text)
    }
}

import Contract
import Foundation
import ProvisionerCLI

/// `bench soak`: a moderate rate for a long time (default 10 minutes); the worker's resident
/// memory at the start (after a minute) and at the end must be flat within 10%.
enum SoakBenchmark {
    /// Options.
    struct Options: BenchOptions {
        /// The load offered.
        var load = OpenLoad(rate: 300, seconds: 600)
        /// Horizon of the duplicate filter and the nonce guard, seconds.
        var horizonSeconds = 120
        /// RSS is compared from this moment on (nil: once the horizons are full).
        var warmupSeconds: Int?
        /// Reads the options given.
        mutating func read(_ arguments: inout CommandArguments) throws {
            try load.read(&arguments, seconds: 30...86_400)
            horizonSeconds = try arguments.integer("horizon-seconds", default: horizonSeconds, in: 30...86_400)
            if arguments.option("warmup-seconds") != nil {
                warmupSeconds = try arguments.integer("warmup-seconds", default: 300, in: 30...86_400)
            }
        }
    }

    /// Runs the scenario in 30-second phases (requests are prepared between phases).
    static func run(_ options: Options, progress: @escaping (String) -> Void) throws -> BenchmarkReport {
        let rig = try BenchRig(partitions: options.load.partitions,
                               profile: PipelineBench.profile(latency: #"{"distribution": "uniform", "min_ms": 20, "max_ms": 80}"#),
                               groupID: "bench-soak") { document in
            PipelineBench.tune(&document, maxInFlight: 512, maxPending: 4_096)
            // The request-id and nonce memories fill for their horizon (10 and 15 minutes by
            // default); shorter horizons let them reach steady state inside the run, so what is
            // left is any real growth.
            document["duplicates"] = .object(["horizon_seconds": .integer(Int64(options.horizonSeconds))])
            document["nonce_guard"] = .object(["horizon_seconds": .integer(Int64(options.horizonSeconds))])
        }
        defer { rig.stop() }
        let (worker, factory, phase) = (rig.worker, rig.factory, rig.phase)
        let phaseSeconds = min(30, options.load.seconds)
        let phases = max(1, options.load.seconds / phaseSeconds)
        var rssAtStart: Double?
        // Measure from the first phase after the horizons have filled (or the second phase).
        let startPhase = min(phases, max(2, (options.warmupSeconds ?? options.horizonSeconds) / phaseSeconds + 1))
        var rows: [[String]] = []
        var answered = 0
        var sent = 0
        var late = 0
        for index in 1...phases {
            let items = try RequestPool.make(options.load.rate * phaseSeconds, mix: .allIssuers, factory: factory, cardPrefix: "soak\(index)")
            let figures = phase.run(items, rate: Double(options.load.rate))
            answered += figures.answered
            sent += figures.sent
            late += figures.lateResults
            let rss = ProcessUsage.residentMegabytes(pid: worker.pid)
            if index == startPhase { rssAtStart = rss }
            rows.append([String(index * phaseSeconds), String(format: "%.1f", rss), String(ProcessUsage.threadCount(pid: worker.pid)),
                         String(figures.answered), PipelineBench.ms(figures.latency(0.99))])
            progress("\(index * phaseSeconds) s: RSS \(String(format: "%.1f", rss)) MB, answered \(figures.answered)/\(figures.sent), p99 \(PipelineBench.ms(figures.latency(0.99))) ms")
        }
        let start = rssAtStart ?? 0
        let end = ProcessUsage.residentMegabytes(pid: worker.pid)
        let change = start > 0 ? (end - start) / start * 100 : 0
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("scenario"); writer.string("soak")
        writer.key("seconds"); writer.integer(Int64(phases * phaseSeconds))
        writer.key("rate"); writer.integer(Int64(options.load.rate))
        writer.key("answered"); writer.integer(Int64(answered))
        writer.key("sent"); writer.integer(Int64(sent))
        writer.key("results_after_deadline"); writer.integer(Int64(late))
        writer.key("horizon_seconds"); writer.integer(Int64(options.horizonSeconds))
        writer.key("measured_from_seconds"); writer.integer(Int64(startPhase * phaseSeconds))
        writer.key("rss_start_mb"); writer.string(String(format: "%.1f", start))
        writer.key("rss_end_mb"); writer.string(String(format: "%.1f", end))
        writer.key("rss_change_percent"); writer.string(String(format: "%.1f", change))
        writer.endObject()
        return BenchmarkReport(
            title: "soak: \(options.load.rate)/s for \(phases * phaseSeconds) s, all issuers, simulator 20–80 ms, 1 worker",
            columns: ["AT S", "WORKER RSS MB", "THREADS", "ANSWERED", "P99 MS"], rows: rows,
            notes: [
                "RSS at \(startPhase * phaseSeconds) s (request-id and nonce memories full after their \(options.horizonSeconds) s horizon) \(String(format: "%.1f", start)) MB, at the end \(String(format: "%.1f", end)) MB: \(String(format: "%+.1f", change))% (target: within 10%)",
                "answered \(answered) of \(sent); results after deadline: \(late)",
                PipelineBench.machine,
            ],
            json: writer.text)
    }
}

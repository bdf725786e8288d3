import Contract
import Foundation

/// `bench soak`: a moderate rate for a long time (default 10 minutes); the worker's resident
/// memory at the start (after a minute) and at the end must be flat within 10%.
public enum SoakBenchmark {
    /// Options.
    public struct Options: Sendable {
        /// Requests per second.
        public var rate = 300
        /// Seconds of load.
        public var seconds = 600
        /// Partitions per topic.
        public var partitions = 6
        /// Creates the defaults.
        public init() {}
    }

    /// Runs the scenario in 30-second phases (requests are prepared between phases).
    public static func run(_ options: Options, progress: @escaping (String) -> Void) throws -> BenchmarkReport {
        let rig = try BenchRig(partitions: options.partitions,
                               profile: PipelineBench.profile(latency: #"{"distribution": "uniform", "min_ms": 20, "max_ms": 80}"#),
                               groupID: "bench-soak") { PipelineBench.tune(&$0, maxInFlight: 512, maxPending: 4_096) }
        defer { rig.stop() }
        let (worker, factory, phase) = (rig.worker, rig.factory, rig.phase)
        let phaseSeconds = min(30, options.seconds)
        let phases = max(1, options.seconds / phaseSeconds)
        var rssAfterFirst: Double?
        var rows: [[String]] = []
        var answered = 0
        var sent = 0
        var late = 0
        for index in 1...phases {
            let items = try RequestPool.make(options.rate * phaseSeconds, mix: .allIssuers, factory: factory, cardPrefix: "soak\(index)")
            let figures = phase.run(items, rate: Double(options.rate))
            answered += figures.answered
            sent += figures.sent
            late += figures.lateResults
            let rss = ProcessUsage.residentMegabytes(pid: worker.pid)
            if index == min(2, phases) { rssAfterFirst = rss }
            rows.append([String(index * phaseSeconds), String(format: "%.1f", rss), String(ProcessUsage.threadCount(pid: worker.pid)),
                         String(figures.answered), PipelineBench.ms(figures.latency(0.99))])
            progress("\(index * phaseSeconds) s: RSS \(String(format: "%.1f", rss)) MB, answered \(figures.answered)/\(figures.sent), p99 \(PipelineBench.ms(figures.latency(0.99))) ms")
        }
        let start = rssAfterFirst ?? 0
        let end = ProcessUsage.residentMegabytes(pid: worker.pid)
        let change = start > 0 ? (end - start) / start * 100 : 0
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("scenario"); writer.string("soak")
        writer.key("seconds"); writer.integer(Int64(phases * phaseSeconds))
        writer.key("rate"); writer.integer(Int64(options.rate))
        writer.key("answered"); writer.integer(Int64(answered))
        writer.key("sent"); writer.integer(Int64(sent))
        writer.key("results_after_deadline"); writer.integer(Int64(late))
        writer.key("rss_start_mb"); writer.string(String(format: "%.1f", start))
        writer.key("rss_end_mb"); writer.string(String(format: "%.1f", end))
        writer.key("rss_change_percent"); writer.string(String(format: "%.1f", change))
        writer.endObject()
        return BenchmarkReport(
            title: "soak: \(options.rate)/s for \(phases * phaseSeconds) s, all issuers, simulator 20–80 ms, 1 worker",
            columns: ["AT S", "WORKER RSS MB", "THREADS", "ANSWERED", "P99 MS"], rows: rows,
            notes: [
                "RSS after the second phase \(String(format: "%.1f", start)) MB, at the end \(String(format: "%.1f", end)) MB: \(String(format: "%+.1f", change))% (target: within 10%)",
                "answered \(answered) of \(sent); results after deadline: \(late)",
                PipelineBench.machine,
            ],
            json: writer.text)
    }
}

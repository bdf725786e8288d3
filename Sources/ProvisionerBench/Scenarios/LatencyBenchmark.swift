import Contract
import Foundation
import ProvisionerCLI

/// `bench latency`: a fixed rate against a simulator answering in a fixed time; end-to-end
/// latency (request produced → result consumed) and the pipeline's own overhead (that minus the
/// issuer's time) at p50/p95/p99/p99.9.
enum LatencyBenchmark {
    /// Options.
    struct Options: BenchOptions {
        /// The load offered.
        var load = OpenLoad(rate: 1_000, seconds: 20)
        /// Simulator latency, ms.
        var issuerMs = 50
        /// How long the mock broker may hold a fetch (the worker's and the result reader's), ms.
        var fetchWaitMs = 2
        /// Reads the options given.
        mutating func read(_ arguments: inout CommandArguments) throws {
            try load.read(&arguments)
            issuerMs = try arguments.issuerMs(default: issuerMs)
            fetchWaitMs = try arguments.integer("fetch-wait-ms", default: fetchWaitMs, in: 1...500)
        }
    }

    /// Runs the scenario.
    static func run(_ options: Options, progress: @escaping (String) -> Void) throws -> BenchmarkReport {
        let rig = try BenchRig(partitions: options.load.partitions,
                               profile: PipelineBench.profile(latency: #"{"distribution": "fixed", "ms": \#(options.issuerMs)}"#),
                               groupID: "bench-latency", resultFetchWaitMs: options.fetchWaitMs) {
            PipelineBench.tune(&$0, maxInFlight: 1_024, maxPending: 8_192, lingerMs: 0, fetchWaitMs: options.fetchWaitMs)
        }
        defer { rig.stop() }
        let (factory, phase) = (rig.factory, rig.phase)
        progress("preparing \(options.load.rate * options.load.seconds) requests")
        let items = try RequestPool.make(options.load.rate * options.load.seconds, mix: .allIssuers, factory: factory)
        progress("offering \(options.load.rate)/s for \(options.load.seconds) s against a \(options.issuerMs) ms simulator")
        let figures = phase.run(items, rate: Double(options.load.rate))
        let quantiles: [(String, Double)] = [("p50", 0.5), ("p95", 0.95), ("p99", 0.99), ("p99.9", 0.999)]
        let rows = quantiles.map { name, q in
            [name, PipelineBench.ms(figures.latency(q)), PipelineBench.ms(figures.overhead(q)),
             PipelineBench.ms(BenchPhase.Figures.percentile(figures.kafkaIn, q)),
             PipelineBench.ms(BenchPhase.Figures.percentile(figures.insideWorker, q)),
             PipelineBench.ms(BenchPhase.Figures.percentile(figures.kafkaOut, q))]
        }
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("scenario"); writer.string("latency")
        writer.key("rate"); writer.integer(Int64(options.load.rate))
        writer.key("issuer_ms"); writer.integer(Int64(options.issuerMs))
        writer.key("answered"); writer.integer(Int64(figures.answered))
        writer.key("achieved_per_second"); writer.integer(Int64(figures.achievedPerSecond))
        for (name, q) in quantiles {
            writer.key("end_to_end_\(name)_ms"); writer.integer(orNull: figures.latency(q))
            writer.key("overhead_\(name)_ms"); writer.integer(orNull: figures.overhead(q))
            writer.key("kafka_in_\(name)_ms"); writer.integer(orNull: BenchPhase.Figures.percentile(figures.kafkaIn, q))
            writer.key("in_worker_\(name)_ms"); writer.integer(orNull: BenchPhase.Figures.percentile(figures.insideWorker, q))
            writer.key("kafka_out_\(name)_ms"); writer.integer(orNull: BenchPhase.Figures.percentile(figures.kafkaOut, q))
        }
        writer.key("late_results"); writer.integer(Int64(figures.lateResults))
        writer.endObject()
        return BenchmarkReport(
            title: "latency: \(options.load.rate)/s for \(options.load.seconds) s, simulator answers in \(options.issuerMs) ms, all issuers, 1 worker",
            columns: ["PERCENTILE", "END-TO-END MS", "OVERHEAD MS", "KAFKA IN", "IN WORKER", "KAFKA OUT"], rows: rows,
            notes: [
                "end-to-end: request produced to its result consumed; overhead: end-to-end minus the issuer's time (result timing.issuer_ms)",
                "overhead parts (each at its own percentile): Kafka in = sent to received by the worker; in worker = received to published minus issuer time (call marker, scheduling, JWE); Kafka out = published to consumed",
                "worker producer linger.ms 0; fetch.wait.max.ms \(options.fetchWaitMs) for the worker and the result reader (the mock broker holds every fetch that long)",
                "answered \(figures.answered) of \(figures.sent) at \(Int(figures.achievedPerSecond))/s; worker CPU \(Int(figures.cpuPercent))% (\(Int(figures.cpuMicrosecondsPerRequest)) µs/request); results after deadline: \(figures.lateResults)",
                PipelineBench.machine,
            ],
            json: writer.text)
    }
}

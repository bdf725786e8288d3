import Contract
import Foundation
import ProvisionerCLI
import Synchronization

/// `bench inflight`: a slow issuer (1 s) at 2,000 requests/s holds ~2,000 calls in flight in one
/// worker: sustained rate, peak RSS and thread count of the worker process.
enum InFlightBenchmark {
    /// Options.
    struct Options: BenchOptions {
        /// The load offered.
        var load = OpenLoad(rate: 2_000, seconds: 20)
        /// Simulator latency, ms.
        var issuerMs = 1_000
        /// Reads the options given.
        mutating func read(_ arguments: inout CommandArguments) throws {
            try load.read(&arguments)
            issuerMs = try arguments.issuerMs(default: issuerMs)
        }
    }

    /// Runs the scenario.
    static func run(_ options: Options, progress: @escaping (String) -> Void) throws -> BenchmarkReport {
        let rig = try BenchRig(partitions: options.load.partitions,
                               profile: PipelineBench.profile(latency: #"{"distribution": "fixed", "ms": \#(options.issuerMs)}"#),
                               groupID: "bench-inflight") { PipelineBench.tune(&$0, maxInFlight: 4_096, maxPending: 16_384) }
        defer { rig.stop() }
        let (stack, worker, factory, phase) = (rig.stack, rig.worker, rig.factory, rig.phase)
        progress("preparing \(options.load.rate * options.load.seconds) requests")
        let items = try RequestPool.make(options.load.rate * options.load.seconds, mix: .imprint, factory: factory)
        progress("offering \(options.load.rate)/s for \(options.load.seconds) s against a \(options.issuerMs) ms simulator (~\(options.load.rate * options.issuerMs / 1000) in flight)")
        let sampler = ProcessSampler(pid: worker.pid)
        let inFlightSamples = InFlightProbe(stack: stack)
        let figures = phase.run(items, rate: Double(options.load.rate))
        let samples = sampler.stop()
        let maxInFlight = inFlightSamples.stop()
        let peakRSS = ProcessUsage.peakResidentMegabytes(pid: worker.pid)
        let maxThreads = samples.map(\.threads).max() ?? 0
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("scenario"); writer.string("inflight")
        writer.key("offered_per_second"); writer.integer(Int64(options.load.rate))
        writer.key("sustained_per_second"); writer.integer(Int64(figures.achievedPerSecond))
        writer.key("answered"); writer.integer(Int64(figures.answered))
        writer.key("max_in_flight_seen"); writer.integer(Int64(maxInFlight))
        writer.key("peak_rss_mb"); writer.integer(Int64(peakRSS))
        writer.key("max_threads"); writer.integer(Int64(maxThreads))
        writer.key("p99_ms"); writer.integer(orNull: figures.latency(0.99))
        writer.key("worker_cpu_percent"); writer.integer(Int64(figures.cpuPercent))
        writer.endObject()
        return BenchmarkReport(
            title: "inflight: \(options.load.rate)/s for \(options.load.seconds) s, simulator answers in \(options.issuerMs) ms, 1 worker",
            columns: ["FIGURE", "VALUE"],
            rows: [["offered/s", String(options.load.rate)], ["sustained/s", String(Int(figures.achievedPerSecond))],
                   ["answered", "\(figures.answered)/\(figures.sent)"], ["most calls in flight seen", String(maxInFlight)],
                   ["worker peak RSS MB", String(format: "%.0f", peakRSS)], ["worker threads (max)", String(maxThreads)],
                   ["p50 / p99 ms", "\(PipelineBench.ms(figures.latency(0.5))) / \(PipelineBench.ms(figures.latency(0.99)))"],
                   ["worker CPU %", String(Int(figures.cpuPercent))]],
            notes: ["in flight read from the worker's provisioner_in_flight gauge every 250 ms", PipelineBench.machine],
            json: writer.text)
    }
}

/// Polls a worker's `provisioner_in_flight` gauge in the background and keeps the highest value.
final class InFlightProbe: Sendable {
    private let stopFlag = Atomic<Bool>(false)
    private let highest = Mutex(0)
    private let done = DispatchSemaphore(value: 0)

    init(stack: BenchStack) {
        let thread = Thread { [self] in
            while !stopFlag.load(ordering: .relaxed) {
                let value = Int(stack.metricTotal("provisioner_in_flight"))
                highest.withLock { $0 = max($0, value) }
                usleep(250_000)
            }
            done.signal()
        }
        thread.start()
    }

    func stop() -> Int {
        if !stopFlag.exchange(true, ordering: .relaxed) { done.wait() }
        return highest.withLock { $0 }
    }
}

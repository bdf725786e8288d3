import Contract
import Foundation
import Harness
import Kafka
import Observability
import ProvisionerCLI

/// `bench compare --peer PATH`: the same load through `provisioner worker` and another worker
/// program (the plain Go worker of `../shared/peers/goworker`, whose command line is
/// `PATH -bootstrap B -sim URL -group G -inflight N`) on one broker and one simulator, one after
/// the other, in paired runs whose order alternates. Each side gets a consumer group of its own
/// whose offsets are first committed at the end of the requests topic, so it reads only its own
/// load; each load is Imprint Apple Pay requests (what the Go worker handles), `burst` at once and
/// then `rate` per second for `seconds`. Per side: requests answered per second (from the first
/// send to the last final result read back) and CPU µs per answered request (the process's
/// utime + stime from `/proc/PID/stat`).
enum CompareBenchmark {
    /// Options.
    struct Options: BenchOptions {
        /// The peer worker's executable.
        var peer = ""
        /// Paired runs.
        var runs = 3
        /// Requests sent at once at the start of each load.
        var burst = 6_000
        /// The load after the burst.
        var load = OpenLoad(rate: 1_000, seconds: 10)
        /// Calls in flight: the worker's `max_in_flight` and the peer's `-inflight`.
        var inFlight = 512
        /// The curve of the requests' reply keys (P-256 by default).
        var replyCurve: JWKCurve = .p256
        /// Reads the options given.
        mutating func read(_ arguments: inout CommandArguments) throws {
            peer = try arguments.requiredOption("peer")
            runs = try arguments.integer("runs", default: runs, in: 1...20)
            burst = try arguments.integer("burst", default: burst, in: 0...100_000)
            try load.read(&arguments, seconds: 1...600)
            inFlight = try arguments.integer("in-flight", default: inFlight, in: 1...10_000)
            replyCurve = try arguments.replyCurve()
        }
    }

    /// One side's figures in one run.
    struct Figures {
        var side: String
        var run: Int
        var sent: Int
        var answered: Int
        var perSecond: Double
        var cpuMicrosecondsPerRequest: Double
        var statuses: [ResultStatus: Int]
    }

    /// Runs the scenario; `progress` gets a line per step.
    static func run(_ options: Options, progress: @escaping (String) -> Void) throws -> BenchmarkReport {
        guard FileManager.default.isExecutableFile(atPath: options.peer) else {
            throw BenchmarkError("--peer \(options.peer) is not an executable file; build the peer first (its README says how)")
        }
        let stack = try BenchStack(partitions: options.load.partitions, profile: PipelineBench.profile(latency: #"{"distribution": "fixed", "ms": 0}"#))
        defer { stack.stop() }
        let producer = try OpenLoopProducer(bootstrapServers: stack.bootstrapServers, topic: stack.topics.requests)
        defer { producer.close() }
        let tracker = try ResultTracker(bootstrapServers: stack.bootstrapServers, topic: stack.topics.results, partitions: options.load.partitions)
        defer { tracker.stop() }
        let factory = try RequestFactory(devices: 8, replyKeyPool: 64, rotateChainEvery: 5_000, replyCurve: options.replyCurve)
        var figures: [Figures] = []
        for run in 1...options.runs {
            for side in run % 2 == 1 ? ["worker", "peer"] : ["peer", "worker"] {
                let load = options.burst + options.load.rate * options.load.seconds
                progress("run \(run), \(side): preparing \(load) requests")
                let items = try RequestPool.make(load, mix: .applePay(program: "demo-imprint"), factory: factory, cardPrefix: "\(side)\(run)")
                let warm = try RequestPool.make(options.load.partitions * 4, mix: .applePay(program: "demo-imprint"), factory: factory,
                                                cardPrefix: "warm-\(side)\(run)")
                let group = "bench-compare-\(side)-\(run)-\(UUID().uuidString.prefix(8))"
                try commitEndOffsets(stack: stack, group: group)
                let process = try start(side, stack: stack, group: group, options: options)
                defer {
                    process.terminate()
                    BenchStack.waitForExit(process, timeoutMs: 30_000)
                }
                progress("run \(run), \(side): warming up (group \(group))")
                guard tracker.waitForFinals(send(warm, producer: producer, tracker: tracker, burst: warm.count, rate: 1), timeoutMs: 60_000) else {
                    throw BenchmarkError("the \(side) answered no warm-up within 60 s: \(process.standardErrorLines.suffix(5).joined(separator: " | "))")
                }
                progress("run \(run), \(side): \(options.burst) at once, then \(options.load.rate)/s for \(options.load.seconds) s")
                let cpuBefore = ProcessUsage.of(pid: process.pid).totalMicroseconds
                let firstSentMs = Timestamps.nowMs()
                let ids = send(items, producer: producer, tracker: tracker, burst: options.burst, rate: Double(options.load.rate))
                _ = tracker.waitForFinals(ids, timeoutMs: 120_000)
                let cpu = Double(ProcessUsage.of(pid: process.pid).totalMicroseconds - cpuBefore)
                let records = tracker.records(ids)
                let answered = records.filter { $0.status != nil }
                let lastFinalMs = answered.map(\.finalConsumedAtMs).max() ?? firstSentMs
                var statuses: [ResultStatus: Int] = [:]
                for record in answered { if let status = record.status { statuses[status, default: 0] += 1 } }
                let figure = Figures(side: side, run: run, sent: items.count, answered: answered.count,
                                     perSecond: Double(answered.count) / max(0.001, Double(lastFinalMs - firstSentMs) / 1000),
                                     cpuMicrosecondsPerRequest: answered.isEmpty ? 0 : cpu / Double(answered.count), statuses: statuses)
                progress("run \(run), \(side): \(figure.answered)/\(figure.sent) answered, \(Int(figure.perSecond))/s, "
                         + "\(Int(figure.cpuMicrosecondsPerRequest)) µs CPU per request")
                figures.append(figure)
            }
        }
        return report(figures, options: options)
    }

    /// Commits the end of every requests partition for `group`, so a member of it starts there.
    private static func commitEndOffsets(stack: BenchStack, group: String) throws {
        let consumer = try KafkaConsumer(configuration: ["bootstrap.servers": stack.bootstrapServers, "group.id": group,
                                                         "enable.auto.commit": "false"], rebalanceListener: nil)
        defer { consumer.close() }
        var offsets: [TopicPartitionOffset] = []
        for partition in 0..<Int32(stack.partitions) {
            let high = try consumer.watermarks(TopicPartition(topic: stack.topics.requests, partition: partition), timeoutMs: 5_000).high
            offsets.append(TopicPartitionOffset(topic: stack.topics.requests, partition: partition, offset: high, metadata: nil))
        }
        try consumer.commit(offsets, synchronously: true)
    }

    /// Starts the side's process: `provisioner worker` (ready at `/readyz`) or the peer.
    private static func start(_ side: String, stack: BenchStack, group: String, options: Options) throws -> ChildProcess {
        if side == "worker" {
            return try stack.startWorker(groupID: group) {
                PipelineBench.tune(&$0, maxInFlight: options.inFlight, maxPending: options.inFlight * 8)
            }
        }
        return try ChildProcess(executable: options.peer, arguments: ["-bootstrap", stack.bootstrapServers, "-sim", stack.simulatorURL,
                                                                      "-group", group, "-inflight", String(options.inFlight)])
    }

    /// Tracks and sends `items`: the first `burst` at once, the rest at `rate` per second; returns their ids.
    private static func send(_ items: [RequestPool.Item], producer: OpenLoopProducer, tracker: ResultTracker, burst: Int, rate: Double) -> [String] {
        let ids = items.map(\.requestID)
        tracker.track(ids)
        _ = producer.run(Array(items.prefix(burst)), ratePerSecond: 1_000_000)
        if items.count > burst { _ = producer.run(Array(items.dropFirst(burst)), ratePerSecond: rate) }
        return ids
    }

    private static func report(_ figures: [Figures], options: Options) -> BenchmarkReport {
        let rows = figures.map { figure in
            [String(figure.run), figure.side, "\(figure.answered)/\(figure.sent)", PipelineBench.figure(figure.perSecond),
             PipelineBench.figure(figure.cpuMicrosecondsPerRequest),
             figure.statuses.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")]
        }
        var ratios: [String] = []
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("scenario"); writer.string("compare")
        writer.key("reply_curve"); writer.string(options.replyCurve.rawValue)
        writer.key("runs"); writer.beginArray()
        for run in 1...options.runs {
            guard let ours = figures.first(where: { $0.run == run && $0.side == "worker" }),
                  let peer = figures.first(where: { $0.run == run && $0.side == "peer" }) else { continue }
            let rateRatio = peer.perSecond > 0 ? ours.perSecond / peer.perSecond : 0
            let cpuRatio = peer.cpuMicrosecondsPerRequest > 0 ? ours.cpuMicrosecondsPerRequest / peer.cpuMicrosecondsPerRequest : 0
            ratios.append("run \(run): worker/peer rate \(String(format: "%.2f", rateRatio))×, CPU per request \(String(format: "%.2f", cpuRatio))×")
            writer.beginObject()
            for (name, figure) in [("worker", ours), ("peer", peer)] {
                writer.key(name); writer.beginObject()
                writer.key("answered"); writer.integer(Int64(figure.answered))
                writer.key("per_second"); writer.integer(Int64(figure.perSecond))
                writer.key("cpu_us_per_request"); writer.integer(Int64(figure.cpuMicrosecondsPerRequest))
                writer.endObject()
            }
            writer.key("rate_ratio"); writer.string(String(format: "%.2f", rateRatio))
            writer.key("cpu_ratio"); writer.string(String(format: "%.2f", cpuRatio))
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return BenchmarkReport(
            title: "compare: provisioner worker vs \(options.peer), \(options.burst) Imprint Apple Pay requests at once then "
                + "\(options.load.rate)/s for \(options.load.seconds) s, reply keys \(options.replyCurve.rawValue), \(options.load.partitions) partitions",
            columns: ["RUN", "SIDE", "ANSWERED", "REQ/S", "CPU µs/REQ", "FINAL STATUSES"],
            rows: rows,
            notes: ratios + [
                "one broker and one simulator for both; sides run one after the other, order alternating by run",
                "every process on the same cores: broker, simulator, the measured side and this load generator",
                PipelineBench.machine,
            ],
            json: writer.text)
    }
}

import Contract
import Foundation
import Harness
import Observability

/// One measured load phase against a `BenchStack`: requests sent open-loop at a rate, results
/// awaited, and the figures that describe what happened.
struct BenchPhase {
    /// Figures of a phase.
    struct Figures {
        var offeredPerSecond: Double
        var sent: Int
        var answered: Int
        /// Requests answered per second, from the first send to the last final result.
        var achievedPerSecond: Double
        /// First result consumed minus sent, ms, sorted.
        var latencies: [Int64]
        /// Latency minus the issuer's own time, ms, sorted.
        var overheads: [Int64]
        /// Worker CPU (user + system) per answered request, µs.
        var cpuMicrosecondsPerRequest: Double
        /// Worker CPU use over the phase, percent of one core.
        var cpuPercent: Double
        /// Results published after deadline − margin for requests received in time.
        var lateResults: Int
        /// Final status counts.
        var statuses: [ResultStatus: Int]
        /// How far the sender fell behind its schedule at worst (ms).
        var senderLagMs: Int64
        /// First-answer status counts (`indeterminate` here: timed out inside the window, then reconciled).
        var firstStatuses: [ResultStatus: Int] = [:]
        /// Sent → received by the worker (Kafka in), ms, sorted.
        var kafkaIn: [Int64] = []
        /// Received → published, minus the issuer's time (inside the worker), ms, sorted.
        var insideWorker: [Int64] = []
        /// Published → consumed by the reader (Kafka out), ms, sorted.
        var kafkaOut: [Int64] = []

        func latency(_ q: Double) -> Int64? { Self.percentile(latencies, q) }
        func overhead(_ q: Double) -> Int64? { Self.percentile(overheads, q) }

        static func percentile(_ sorted: [Int64], _ q: Double) -> Int64? {
            guard !sorted.isEmpty else { return nil }
            let rank = Int((q * Double(sorted.count)).rounded(.up)) - 1
            return sorted[min(sorted.count - 1, max(0, rank))]
        }
    }

    let stack: BenchStack
    let producer: OpenLoopProducer
    let tracker: ResultTracker

    /// What a phase observed, to compute figures over all requests or a subset.
    struct Observation {
        let items: [RequestPool.Item]
        let sentAt: [Int64]
        let records: [ResultTracker.Record]
        let rate: Double
        let cpuMicroseconds: Double
        let wallMs: Double
        let senderLagMs: Int64
        let replyMarginMs: Int64

        /// Figures over the requests whose index passes `include` (all by default).
        func figures(_ include: (Int) -> Bool = { _ in true }) -> Figures {
            var latencies: [Int64] = []
            var overheads: [Int64] = []
            var kafkaIn: [Int64] = []
            var insideWorker: [Int64] = []
            var kafkaOut: [Int64] = []
            var statuses: [ResultStatus: Int] = [:]
            var firstStatuses: [ResultStatus: Int] = [:]
            var late = 0
            var answered = 0
            var sent = 0
            var firstSent = Int64.max
            var lastFinal: Int64 = 0
            for (index, record) in records.enumerated() where include(index) {
                sent += 1
                firstSent = min(firstSent, sentAt[index])
                lastFinal = max(lastFinal, record.finalConsumedAtMs)
                if let status = record.status {
                    statuses[status, default: 0] += 1
                    answered += 1
                }
                guard record.firstConsumedAtMs > 0 else { continue }
                if let first = record.firstStatus { firstStatuses[first, default: 0] += 1 }
                let latency = record.firstConsumedAtMs - sentAt[index]
                latencies.append(latency)
                overheads.append(max(0, latency - record.issuerMs))
                if record.receivedAtMs > 0 && record.publishedAtMs > 0 {
                    kafkaIn.append(max(0, record.receivedAtMs - sentAt[index]))
                    insideWorker.append(max(0, record.publishedAtMs - record.receivedAtMs - record.issuerMs))
                    kafkaOut.append(max(0, record.firstConsumedAtMs - record.publishedAtMs))
                }
                if record.deadlineMs > 0, record.publishedAtMs > record.deadlineMs - replyMarginMs,
                   record.receivedAtMs < record.deadlineMs - replyMarginMs {
                    late += 1
                }
            }
            let elapsedMs = max(1, Double(lastFinal - (firstSent == .max ? lastFinal : firstSent)))
            let share = records.isEmpty ? 0 : Double(answered) / Double(max(1, records.filter { $0.status != nil }.count))
            return Figures(offeredPerSecond: rate * Double(sent) / Double(max(1, records.count)), sent: sent, answered: answered,
                           achievedPerSecond: Double(answered) / (elapsedMs / 1000), latencies: latencies.sorted(),
                           overheads: overheads.sorted(),
                           cpuMicrosecondsPerRequest: answered > 0 ? cpuMicroseconds * share / Double(answered) : 0,
                           cpuPercent: cpuMicroseconds / (wallMs * 10), lateResults: late, statuses: statuses, senderLagMs: senderLagMs,
                           firstStatuses: firstStatuses, kafkaIn: kafkaIn.sorted(), insideWorker: insideWorker.sorted(),
                           kafkaOut: kafkaOut.sorted())
        }
    }

    /// Sends `items` at `rate` per second, waits up to `drainTimeoutMs` for every final result,
    /// and measures. `replyMarginMs` is the configured reply margin.
    func run(_ items: [RequestPool.Item], rate: Double, drainTimeoutMs: Int64 = 60_000, replyMarginMs: Int64 = 1_000) -> Figures {
        observe(items, rate: rate, drainTimeoutMs: drainTimeoutMs, replyMarginMs: replyMarginMs).figures()
    }

    /// Like `run`, but returns the observation (for figures over subsets).
    func observe(_ items: [RequestPool.Item], rate: Double, drainTimeoutMs: Int64 = 60_000, replyMarginMs: Int64 = 1_000) -> Observation {
        let ids = items.map(\.requestID)
        tracker.track(ids)
        let workerPIDs = stack.workers.map(\.pid)
        let cpuBefore = workerPIDs.map { ProcessUsage.of(pid: $0).totalMicroseconds }.reduce(0, +)
        let started = ProcessUsage.monotonicMilliseconds()
        let (sentAt, lag) = producer.run(items, ratePerSecond: rate)
        _ = tracker.waitForFinals(ids, timeoutMs: drainTimeoutMs)
        let records = tracker.records(ids)
        let cpuAfter = workerPIDs.map { ProcessUsage.of(pid: $0).totalMicroseconds }.reduce(0, +)
        return Observation(items: items, sentAt: sentAt, records: records, rate: rate, cpuMicroseconds: Double(cpuAfter - cpuBefore),
                           wallMs: max(1, ProcessUsage.monotonicMilliseconds() - started), senderLagMs: lag, replyMarginMs: replyMarginMs)
    }
}

/// Shared pieces of the pipeline scenarios.
enum PipelineBench {
    /// A simulator profile: `latency` for every issuer (JSON object), no faults, no call log.
    static func profile(latency: String, extra: String = "") -> JSONValue {
        // swiftlint:disable:next force_try
        try! JSONParser().parse("""
            {"record_calls": false, "repeat_provisioning": "allow", "apple_ephemeral_key_reuse": 16,
             "all": {"latency": \(latency)}\(extra)}
            """)
    }

    /// Standard worker settings for benchmarks, with `scheduler` overrides.
    /// `lingerMs` batches the worker's produces (throughput) or sends at once (latency);
    /// `fetchWaitMs` bounds how long the mock broker holds a fetch.
    static func tune(_ document: inout [String: JSONValue], maxInFlight: Int, maxPending: Int, ordering: String = "edf",
                     lingerMs: Int = 2, fetchWaitMs: Int = 10) {
        document["scheduler"] = .object(["max_in_flight": .integer(Int64(maxInFlight)), "max_pending": .integer(Int64(maxPending)),
                                         "ordering": .string(ordering)])
        document["kafka_producer"] = .object(["linger.ms": .string(String(lingerMs))])
        var consumer = document["kafka_consumer"]?.objectValue ?? [:]
        consumer["fetch.wait.max.ms"] = .string(String(fetchWaitMs))
        document["kafka_consumer"] = .object(consumer)
    }

    static func ms(_ value: Int64?) -> String { value.map { "\($0)" } ?? "-" }

    static func figure(_ value: Double, digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }

    /// Machine facts for report notes.
    static var machine: String {
        "machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB; "
            + "load average \(String(format: "%.2f", ProcessUsage.loadAverage())); \(RFC3339.format(milliseconds: Timestamps.nowMs()))"
    }

    /// Warms the pipeline up: one request per partition, answered.
    static func warmUp(_ phase: BenchPhase, factory: RequestFactory, partitions: Int) throws {
        let items = try RequestPool.make(partitions * 4, mix: .googleWallet(program: "demo-imprint"), factory: factory, cardPrefix: "warm")
        _ = phase.run(items, rate: 200, drainTimeoutMs: 30_000)
    }
}

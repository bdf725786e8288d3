import Contract
import Foundation
import Harness
import Kafka
import Observability
@testable import Pipeline
import Recovery
import Testing
import TestSupport

/// A fresh worker (built, then started, no message sent) already exposes every series the
/// Grafana dashboard queries, counters at 0, so its panels show 0 instead of "No data"; and every
/// label value is one known at start (configuration, the code's enums, the loaded librdkafka).
@Suite("Metrics exist from the start: a fresh worker exposes what the dashboard queries, at 0", .serialized, .timeLimit(.minutes(5)))
struct FreshWorkerMetricsTests {
    /// What `text` lacks that the dashboard queries (the metric or its labels), apart from the
    /// metrics `allowedMissing`.
    static func problems(_ text: String, allowedMissing: Set<String> = []) throws -> [String] {
        let dashboard = try Repository.json(DashboardTests.dashboardPath)
        return DashboardTests.dashboardProblems(dashboard, exposed: Exposition(text)).filter { problem in
            !allowedMissing.contains { problem.contains("'\($0)' is not a series the worker exposes") || problem.contains("is not on [\"\($0)\"]") }
        }
    }

    /// Counter samples (and histogram counts) of `exposition` that are not 0.
    static func nonZeroCounts(_ exposition: Exposition) -> [String] {
        exposition.samples.filter { sample in
            guard let family = exposition.family(of: sample.name), let kind = exposition.types[family] else { return false }
            let counted = kind == "counter" || (kind == "histogram" && (sample.name.hasSuffix("_count") || sample.name.hasSuffix("_bucket")))
            return counted && sample.number != 0
        }.map { "\($0.name)\($0.labels.sorted { $0.key < $1.key }) = \($0.value)" }
    }

    @Test("built and then started, nothing sent: every metric and label the dashboard queries is exposed, counters at 0, labels bounded")
    func freshWorker() async throws {
        let stack = try EmbeddedStack(partitions: 2)
        defer { stack.stop() }
        let configuration = try stack.configuration(groupID: UniqueName.make("fresh-metrics"), workerID: "fresh-w1") { configuration in
            // The dashboard's rate-limit panel charts the programs that have a rate limit (as DashboardTests' worker).
            configuration.programs["demo-imprint"]?.rateLimit = .init(perSecond: 1_000, burst: 1_000)
            configuration.scheduler.rateLimits["demo-imprint"] = .init(perSecond: 1_000, burst: 1_000)
        }
        let registry = MetricsRegistry()
        let log = CapturingLogHandler()
        let worker = try Worker(configuration: configuration, environment: stack.environment,
                                logger: Logger(label: "fresh", minimumLevel: .notice, handler: log), metrics: registry)
        let programs = Set(configuration.programs.keys)
        let endpoints = Set(configuration.programs.values.map(\.endpoint))
        let topics: Set<String> = [configuration.topics.requests, configuration.topics.reconcile]

        // librdkafka's statistics series come with each client's first report, statistics.interval.ms
        // after it starts (KafkaStatisticsEndToEndTests shows them on a fresh worker's /metrics).
        let statisticsSeries: Set<String> = ["provisioner_kafka_broker_rtt_average_seconds", "provisioner_kafka_broker_rtt_p99_seconds",
                                             "provisioner_kafka_broker_up", "provisioner_kafka_producer_queue_messages",
                                             "provisioner_kafka_producer_queue_bytes", KafkaStatisticsMetrics.Name.consumerLag,
                                             KafkaStatisticsMetrics.Name.fetchState]
        // Before start: everything but the per-partition pause gauge, which needs the partition count.
        let built = registry.renderPrometheus()
        let beforeStart = try Self.problems(built, allowedMissing: statisticsSeries.union([WorkerMetrics.partitionPaused]))
        #expect(beforeStart.isEmpty, "before start, \(beforeStart.count) problems:\n\(beforeStart.joined(separator: "\n"))")
        #expect(Self.nonZeroCounts(Exposition(built)).isEmpty, "counted before any message: \(Self.nonZeroCounts(Exposition(built)))")

        try worker.start()
        let started = registry.renderPrometheus()
        worker.shutdown()
        worker.waitUntilStopped()

        let exposition = Exposition(started)
        let problems = try Self.problems(started, allowedMissing: statisticsSeries)
        #expect(problems.isEmpty, "after start, \(problems.count) problems:\n\(problems.joined(separator: "\n"))")
        #expect(Self.nonZeroCounts(exposition).isEmpty, "counted with no message sent: \(Self.nonZeroCounts(exposition))")
        let conventions = DashboardTests.conventionProblems(exposition, programs: programs, endpoints: endpoints,
                                                            topics: topics, partitions: stack.partitions,
                                                            brokers: Set(stack.cluster.brokerIDs.map(String.init)))
        #expect(conventions.isEmpty, "\(conventions.count) problems:\n\(conventions.joined(separator: "\n"))")
        // The fallbacks appear only once something falls outside the known sets.
        let fallbacks = exposition.samples.filter { $0.labels.values.contains { $0 == WorkerMetrics.otherLabel }
            || ($0.labels["program"] == WorkerMetrics.unknownLabel) || ($0.labels["endpoint"] == WorkerMetrics.unknownLabel) }
        #expect(fallbacks.isEmpty, "fallback labels on a fresh worker: \(fallbacks.map(\.name))")

        // Each labelled counter has a series at 0 for every label value known at start.
        func has(_ name: String, _ labels: [String: String]) -> Bool {
            exposition.samples.contains { $0.name == name && $0.labels == labels && $0.number == 0 }
        }
        var missing: [String] = []
        func expectSeries(_ name: String, _ labels: [String: String]) {
            if !has(name, labels) { missing.append("\(name)\(labels.sorted { $0.key < $1.key })") }
        }
        for program in programs {
            for wallet in Wallet.allCases {
                for status in ResultStatus.allCases {
                    expectSeries("provisioner_requests_total", ["program": program, "wallet": wallet.rawValue, "status": status.rawValue])
                }
            }
            expectSeries("provisioner_expired_total", ["program": program])
            for reason in ["breaker_open", "rate_limited"] { expectSeries("provisioner_refusals_total", ["reason": reason, "program": program]) }
        }
        for code in DeadLetterCode.defined {
            for parked in ["false", "true"] { expectSeries("provisioner_dead_letters_total", ["code": code.rawValue, "parked": parked]) }
        }
        #expect(DeadLetterCode.defined.contains(.invalidReplayOf), "the intake's invalid_replay_of is a defined code, not 'other'")
        for outcome in WorkerMetrics.reconcileOutcomes { expectSeries("provisioner_reconcile_total", ["outcome": outcome]) }
        for endpoint in endpoints {
            for state in ["closed", "open", "half_open"] { expectSeries("provisioner_breaker_transitions_total", ["endpoint": endpoint, "state": state]) }
        }
        for verdict in ["fenced_out", "unconfirmed"] { expectSeries("provisioner_call_fencing_total", ["verdict": verdict]) }
        for replay in ["false", "true"] { expectSeries("provisioner_unauthenticated_total", ["replay": replay]) }
        expectSeries("provisioner_duplicates_ignored_total", [:])
        for partition in 0..<stack.partitions {
            if !exposition.samples.contains(where: { $0.name == WorkerMetrics.partitionPaused
                && $0.labels == ["topic": configuration.topics.requests, "partition": String(partition)] }) {
                missing.append("\(WorkerMetrics.partitionPaused) of requests partition \(partition)")
            }
        }
        #expect(missing.isEmpty, "series missing on a fresh worker: \(missing)")
        #expect(exposition.samples.contains { $0.name == WorkerMetrics.librdkafkaInfo && $0.labels == ["version": KafkaRuntime.version] && $0.value == "1" },
                "provisioner_librdkafka_info{version=\"\(KafkaRuntime.version)\"} 1")
        // The loaded library and the assignor in force, once, in the start line.
        let startLines = log.records.filter { $0.message == "worker started" }
        #expect(startLines.count == 1)
        let fields = Dictionary(startLines.first?.fields ?? [], uniquingKeysWith: { first, _ in first })
        #expect(fields["librdkafka"] == .string(KafkaRuntime.version))
        #expect(fields["assignor"] == .string(KafkaRuntime.assignor(configured: configuration.consumerProperties)))
    }

    @Test("provisioner version: the loaded librdkafka, the headers built against, the default assignor; --version says the same")
    func versionCommand() throws {
        let run = try CommandRun.run(BuiltProducts.provisionerPath, ["version"])
        #expect(run.status == 0, "\(run)")
        #expect(run.standardOutput == """
            librdkafka \(KafkaRuntime.version)
            built against librdkafka \(KafkaRuntime.builtAgainst)
            default assignor \(KafkaRuntime.defaultAssignor)

            """, "\(run)")
        let flag = try CommandRun.run(BuiltProducts.provisionerPath, ["--version"])
        #expect(flag.status == 0 && flag.standardOutput == run.standardOutput, "\(flag)")
    }

    @Test("every reconciliation outcome ReconcileRunner counts is one WorkerMetrics creates at start")
    func reconcileOutcomesListed() throws {
        // Counted directly, or through the reading of an answer (`ReconcileReading`'s `counted:` labels).
        let pattern = try NSRegularExpression(pattern: #"(?:countReconcile\(|counted: )"([a-z_]+)""#)
        var used: Set<String> = []
        for file in try Repository.files(in: "Sources/Pipeline/Reconciliation", endingWith: ".swift") {
            let source = try Repository.text("Sources/Pipeline/Reconciliation/\(file)")
            for match in pattern.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
                if let range = Range(match.range(at: 1), in: source) { used.insert(String(source[range])) }
            }
        }
        #expect(used.count >= 5, "reconciliation outcomes counted: \(used.sorted())")
        #expect(used.subtracting(WorkerMetrics.reconcileOutcomes).isEmpty,
                "outcomes counted but not created at start: \(used.subtracting(WorkerMetrics.reconcileOutcomes).sorted())")
    }
}

import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import TestSupport

/// One test's world: its own embedded stack (mock cluster + simulator), its own consumer group,
/// a collector reading results, dead letters, parked messages and audit from the beginning, a
/// producer for requests, and helpers to wait for exactly what a test expects.
final class RecoveryRig: Sendable {
    let stack: EmbeddedStack
    /// The worker group of this test (unique).
    let group: String
    let collector: ResultCollector
    let producer: KafkaProducer
    let factory: RequestFactory
    /// Reconciliation tiers every worker of this rig uses.
    let tiersMs: [Int64]
    /// Every worker log line (kept for failure messages).
    let logs = CapturingLogHandler()
    /// The variable the rig's workers and `OperatorTool` read the replay key from.
    static let replayKeyVariable = "RECOVERY_REPLAY_KEY"
    /// This rig's replay key: workers MAC their dead letters with it, `dlq replay` checks and signs with it.
    let replayKey = "RecoveryReplay" + Crypto.hex(Crypto.randomBytes(12))
    /// The environment a worker of this rig needs beyond the stack's: the replay key.
    var replayEnvironment: [String: String] { [Self.replayKeyVariable: replayKey] }
    /// The operator tool for this rig's broker, with its replay key.
    var operatorTool: OperatorTool { OperatorTool(bootstrap: bootstrap, replayKey: replayKey) }

    init(brokers: Int = 1, partitions: Int = 3, tiersMs: [Int64] = [300, 600, 1200]) throws {
        stack = try EmbeddedStack(brokers: brokers, partitions: partitions)
        group = "recovery-\(UUID().uuidString)"
        self.tiersMs = tiersMs
        do {
            collector = try ResultCollector(properties: stack.consumerProperties, topics: stack.topics, partitions: partitions)
            producer = try KafkaProducer(configuration: stack.producerProperties)
            factory = try RequestFactory(devices: 2)
        } catch {
            stack.stop()
            throw error
        }
    }

    var topics: TopicNames { stack.topics }
    var bootstrap: String { stack.bootstrapServers }

    /// The demo configuration for this rig's group, short reconciliation tiers, then `adjust`.
    func configuration(workerID: String = "worker-1", adjust: (inout WorkerConfiguration) -> Void = { _ in }) throws -> WorkerConfiguration {
        try stack.configuration(groupID: group, workerID: workerID) { configuration in
            configuration.reconcileTiersMs = tiersMs
            configuration.logLevel = .info
            configuration.replaySigningSecret = .environment(Self.replayKeyVariable)
            adjust(&configuration)
        }
    }

    /// Starts a worker and waits until the group owns every requests partition.
    @discardableResult
    func startWorker(_ configuration: WorkerConfiguration, metrics: MetricsRegistry = MetricsRegistry(),
                     clock: @escaping @Sendable () -> Int64 = { Timestamps.nowMs() }) throws -> Worker {
        let worker = try stack.startWorker(configuration, extraEnvironment: replayEnvironment, logger: Logger(label: configuration.workerID, minimumLevel: .info, handler: logs),
                                           metrics: metrics, clock: clock)
        guard stack.waitForGroup(timeoutMs: 60_000) else {
            throw TestSupportError("the worker group did not form within 60 s; logs:\n\(recentLogs())")
        }
        return worker
    }

    /// Answers one request on every partition first, so a timed test does not pay for first
    /// fetches (offset resets) and connection set-up.
    func warmUp() async throws {
        let (stack, factory, producer, collector) = (self.stack, self.factory, self.producer, self.collector)
        try await DedicatedThread.run(name: "rig-warm-up") {
            try EmbeddedStack.warmUp(partitions: stack.partitions, topic: stack.topics.requests, factory: factory, producer: producer,
                                     collector: collector, timeoutMs: 60_000)
        }
    }

    /// Produces one record and waits for its acknowledgement.
    @discardableResult
    func send(_ value: [UInt8], key: [UInt8]?, headers: [KafkaHeader] = [], topic: String? = nil) async throws -> KafkaDeliveryReport {
        try await producer.send(KafkaOutgoingMessage(topic: topic ?? topics.requests, key: key, value: value, headers: headers))
    }

    /// Produces a generated request.
    @discardableResult
    func send(_ request: GeneratedRequest, headers: [KafkaHeader] = []) async throws -> KafkaDeliveryReport {
        try await send(request.value, key: request.key, headers: headers)
    }

    /// Waits (off the cooperative pool) until `condition` holds for what the collector saw, and
    /// returns that snapshot; throws, quoting `what` and the recent logs, when it does not within
    /// `timeoutMs`.
    @discardableResult
    func wait(for what: String, timeoutMs: Int64 = 60_000,
              until condition: @escaping @Sendable (ResultCollector.Snapshot) -> Bool) async throws -> ResultCollector.Snapshot {
        let collector = self.collector
        let held = await DedicatedThread.run(name: "rig-wait") { collector.wait(timeoutMs: timeoutMs, until: condition) }
        guard held else {
            let snapshot = collector.snapshot
            throw TestSupportError("""
                waited \(timeoutMs / 1000) s for \(what): never happened. Saw \(snapshot.results.count) request(s) with results, \
                \(snapshot.deadLetters.count) dead/parked letter(s), \(snapshot.audit.count) audit event(s). Recent logs:
                \(recentLogs())
                """)
        }
        return collector.snapshot
    }

    /// Stops a worker (drain, commit, leave the group).
    func stopWorker(_ worker: Worker) async {
        let stack = self.stack
        await DedicatedThread.run(name: "rig-stop-worker") { stack.stopWorker(worker) }
    }

    /// The end offset of every partition of `topic`.
    func endOffsets(_ topic: String) throws -> [Int32: Int64] {
        var properties = stack.consumerProperties
        properties["group.id"] = "offsets-\(UUID().uuidString)"
        let consumer = try KafkaConsumer(configuration: properties, rebalanceListener: nil)
        defer { consumer.close() }
        var ends: [Int32: Int64] = [:]
        for partition in 0..<Int32(stack.partitions) {
            ends[partition] = try consumer.watermarks(TopicPartition(topic: topic, partition: partition), timeoutMs: 10_000).high
        }
        return ends
    }

    /// Waits until reconciliation has nothing left: the worker holds or runs no job
    /// (`provisioner_reconcile_backlog` 0), the reconciliation group has committed every job on the
    /// reconcile topic, and the collector has read every result written. After that nothing more
    /// can be published for a reconciled request: a "nothing else arrives" check needs no window.
    /// Returns what was still outstanding when `timeoutMs` ran out (nil: idle).
    func waitUntilReconciliationIdle(metrics: MetricsRegistry, timeoutMs: Int64 = 60_000) async throws -> String? {
        let (stack, group, collector) = (self.stack, self.group, self.collector)
        return try await DedicatedThread.run(name: "rig-reconcile-idle") { () throws -> String? in
            var properties = stack.consumerProperties
            properties["group.id"] = group + ".reconcile"
            properties["enable.auto.commit"] = "false"
            let probe = try KafkaConsumer(configuration: properties, rebalanceListener: nil)
            defer { probe.close() }
            let jobs = (0..<Int32(stack.partitions)).map { TopicPartition(topic: stack.topics.reconcile, partition: $0) }
            let results = (0..<Int32(stack.partitions)).map { TopicPartition(topic: stack.topics.results, partition: $0) }
            let deadline = Timestamps.nowMs() + timeoutMs
            var problem = "nothing checked"
            repeat {
                let backlog = metrics.value("provisioner_reconcile_backlog") ?? -1
                let committed = try probe.committed(jobs, timeoutMs: 5_000)
                let behind = try jobs.filter { partition in
                    let end = try probe.watermarks(partition, timeoutMs: 5_000).high
                    let offset = committed.first { $0.partition == partition.partition }?.offset ?? -1
                    return end > 0 && offset != end
                }
                let written = try results.reduce(Int64(0)) { total, partition in
                    let marks = try probe.watermarks(partition, timeoutMs: 5_000)
                    return total + marks.high - marks.low
                }
                let snapshot = collector.snapshot
                let read = Int64(snapshot.results.values.reduce(0) { $0 + $1.count } + snapshot.undecodableResults)
                if backlog == 0 && behind.isEmpty && read == written { return nil }
                problem = "reconcile backlog \(backlog), reconcile partitions not committed to their end \(behind.map(\.partition)), results read \(read) of \(written)"
                usleep(100_000)
            } while Timestamps.nowMs() < deadline
            return problem
        }
    }

    /// Waits until the worker group has committed every requests partition to its end: every record
    /// on the topic is finished, and a record is finished only once its outputs are acknowledged.
    /// Returns the partitions still behind when `timeoutMs` ran out (empty: all committed).
    func waitForRequestsCommitted(timeoutMs: Int64 = 60_000) async throws -> [Int32] {
        let (stack, group) = (self.stack, self.group)
        return try await DedicatedThread.run(name: "rig-requests-committed") { () throws -> [Int32] in
            var properties = stack.consumerProperties
            properties["group.id"] = group
            properties["enable.auto.commit"] = "false"
            let probe = try KafkaConsumer(configuration: properties, rebalanceListener: nil)
            defer { probe.close() }
            let partitions = (0..<Int32(stack.partitions)).map { TopicPartition(topic: stack.topics.requests, partition: $0) }
            let deadline = Timestamps.nowMs() + timeoutMs
            var behind: [Int32] = []
            repeat {
                let committed = try probe.committed(partitions, timeoutMs: 5_000)
                behind = try partitions.filter { partition in
                    let end = try probe.watermarks(partition, timeoutMs: 5_000).high
                    return end > 0 && (committed.first { $0.partition == partition.partition }?.offset ?? -1) != end
                }.map(\.partition)
                if behind.isEmpty { return [] }
                usleep(100_000)
            } while Timestamps.nowMs() < deadline
            return behind
        }
    }

    /// The last worker log lines, for failure messages.
    func recentLogs(_ count: Int = 40) -> String {
        logs.renderedLines.suffix(count).joined(separator: "\n")
    }

    /// Stops the collector, the producer, every worker, the simulator and the cluster.
    func stop() {
        collector.stop()
        producer.close(timeoutMs: 5_000)
        stack.stop()
    }
}

extension ResultCollector.Snapshot {
    /// Every result of `requestID`, in arrival order.
    func all(_ requestID: String) -> [ProvisioningResult] { results[requestID]?.map(\.result) ?? [] }

    /// Audit stages recorded for `requestID`, in arrival order.
    func stages(_ requestID: String) -> [AuditStage] { audit.filter { $0.requestID == requestID }.map(\.stage) }

    /// Dead letters (not parked) of `requestID`.
    func deadLetters(_ requestID: String, topic: String) -> [DeadLetterEntry] {
        deadLetters.filter { $0.topic == topic && $0.summary.requestID == requestID }
    }
}

extension DeadLetterEntry {
    /// A header's text.
    func header(_ name: String) -> String? {
        headers.last { $0.key == name }?.value.map { String(decoding: $0, as: UTF8.self) }
    }
}

extension KafkaHeader {
    /// The value as text.
    var text: String? { value.map { String(decoding: $0, as: UTF8.self) } }
}

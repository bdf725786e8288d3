import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Simulator
import Synchronization
import TestSupport
import Testing

/// One end-to-end test's world: its own embedded stack (broker + simulator), its own consumer
/// group, a result collector, a request factory, a producer, and the workers it started with the
/// metrics and logs of each. `stop()` (in a `defer`) tears everything down in a safe order.
final class PipelineRig {
    let stack: EmbeddedStack
    let collector: ResultCollector
    let factory: RequestFactory
    let producer: KafkaProducer
    let groupID: String
    /// Logs of every in-process worker of this rig.
    let logs = CapturingLogHandler()
    private(set) var workers: [(worker: Worker, metrics: MetricsRegistry)] = []

    init(partitions: Int = 3, keepRaw: Bool = false, profile: SimulatorProfile = SimulatorProfile(), devices: Int = 4) throws {
        stack = try EmbeddedStack(partitions: partitions, profile: profile)
        groupID = "e2e-\(UUID().uuidString)"
        do {
            collector = try ResultCollector(properties: stack.consumerProperties, topics: stack.topics, partitions: stack.partitions,
                                            keepRaw: keepRaw)
        } catch {
            stack.stop()
            throw error
        }
        do {
            factory = try RequestFactory(devices: devices)
            producer = try KafkaProducer(configuration: stack.producerProperties)
        } catch {
            collector.stop()
            stack.stop()
            throw error
        }
    }

    /// Stops the producer, the collector, every worker, the simulator and the broker.
    func stop() {
        producer.close(timeoutMs: 5_000)
        collector.stop()
        stack.stop()
    }

    /// Starts an in-process worker of this rig's group; `adjust` may change its configuration,
    /// `extraEnvironment` adds to the stack's environment (a replay key, say) and `clock` is the
    /// worker's time (a `SteppedClock` lets a test move it on).
    @discardableResult
    func startWorker(_ workerID: String = "worker-1", level: LogLevel = .info, extraEnvironment: [String: String] = [:],
                     adjust: (inout WorkerConfiguration) -> Void = { _ in },
                     clock: @escaping @Sendable () -> Int64 = { Timestamps.nowMs() }) throws -> Worker {
        let configuration = try stack.configuration(groupID: groupID, workerID: workerID, adjust: adjust)
        let metrics = MetricsRegistry()
        let worker = try stack.startWorker(configuration, extraEnvironment: extraEnvironment,
                                           logger: Logger(label: workerID, minimumLevel: level, handler: logs),
                                           metrics: metrics, clock: clock)
        workers.append((worker, metrics))
        return worker
    }

    /// Prints the workers' logs (info and above) to the test output: called when a hand-over
    /// expectation fails, so a CI run's failure can be read from its log.
    func printLogs(because reason: String) {
        print("PipelineRig: worker logs, because \(reason):")
        for line in logs.renderedLines where !line.hasPrefix("debug") { print("  \(line)") }
    }

    /// The metrics registry of a worker this rig started.
    func metrics(of worker: Worker) -> MetricsRegistry? {
        workers.first { $0.worker === worker }?.metrics
    }

    /// Waits for the group, then sends one request per partition and waits for their results.
    func formGroupAndWarmUp() throws {
        try #require(stack.waitForGroup(timeoutMs: 60_000), "the workers did not get every partition within 60 s")
        try EmbeddedStack.warmUp(partitions: stack.partitions, topic: stack.topics.requests, factory: factory, producer: producer,
                                 collector: collector, timeoutMs: 60_000)
    }

    /// Produces `request` (keyed by its card, or to `partition`), retrying while the local queue is full.
    func send(_ request: GeneratedRequest, partition: Int32? = nil) throws {
        try send(key: request.key, value: request.value, partition: partition)
    }

    /// Produces raw bytes to the requests topic.
    func send(key: [UInt8]?, value: [UInt8], partition: Int32? = nil, headers: [KafkaHeader] = []) throws {
        let message = KafkaOutgoingMessage(topic: stack.topics.requests, key: key, value: value, headers: headers, partition: partition)
        while true {
            do {
                try producer.send(message) { _ in }
                return
            } catch where error.code == .queueFull {
                usleep(1_000)
            }
        }
    }

    /// Waits until every request id has a final result.
    func waitForFinals(_ ids: [String], timeoutMs: Int64 = 90_000) -> Bool {
        collector.wait(timeoutMs: timeoutMs) { snapshot in ids.allSatisfy { snapshot.final($0) != nil } }
    }

    /// Ids among `ids` without a final result (for failure messages).
    func missingFinals(_ ids: [String]) -> [String] {
        let snapshot = collector.snapshot
        return ids.filter { snapshot.final($0) == nil }
    }

    /// Waits until nothing more can arrive for the requests produced so far: the group committed
    /// every requests partition up to its end (a record is committed only after its result was
    /// acknowledged, so none can be redelivered), and the collector holds every record of the
    /// results topic. After this, counting results is exact. Returns nil once quiet, else what
    /// was still outstanding when `timeoutMs` ran out.
    func waitUntilQuiet(timeoutMs: Int64 = 60_000) throws -> String? {
        var properties = stack.consumerProperties
        properties["group.id"] = groupID
        properties["enable.auto.commit"] = "false"
        let probe = try KafkaConsumer(configuration: properties, rebalanceListener: nil)
        defer { probe.close() }
        let requests = (0..<Int32(stack.partitions)).map { TopicPartition(topic: stack.topics.requests, partition: $0) }
        let results = (0..<Int32(stack.partitions)).map { TopicPartition(topic: stack.topics.results, partition: $0) }
        let deadline = Timestamps.nowMs() + timeoutMs
        var problem = "nothing checked"
        while Timestamps.nowMs() < deadline {
            do {
                let committed = try probe.committed(requests, timeoutMs: 5_000)
                let behind = try requests.compactMap { partition -> String? in
                    let end = try probe.watermarks(partition, timeoutMs: 5_000).high
                    let offset = committed.first { $0.partition == partition.partition }?.offset
                    return end == 0 || offset == end ? nil : "requests[\(partition.partition)] committed \(offset.map(String.init) ?? "none") of \(end)"
                }
                guard behind.isEmpty else {
                    problem = behind.joined(separator: ", ")
                    usleep(50_000)
                    continue
                }
                let published = try results.reduce(Int64(0)) { total, partition in
                    let marks = try probe.watermarks(partition, timeoutMs: 5_000)
                    return total + marks.high - marks.low
                }
                func collected(_ snapshot: ResultCollector.Snapshot) -> Int64 {
                    Int64(snapshot.results.values.reduce(0) { $0 + $1.count } + snapshot.undecodableResults)
                }
                if collector.wait(timeoutMs: max(0, deadline - Timestamps.nowMs()), until: { collected($0) >= published }) { return nil }
                return "the collector read \(collected(collector.snapshot)) of \(published) results"
            } catch {
                problem = "\(error)"
                usleep(50_000)
            }
        }
        return problem
    }

    /// Expects `waitUntilQuiet` to succeed, saying what was outstanding when it does not.
    func expectQuiet(_ comment: @autoclosure () -> String = "", sourceLocation: SourceLocation = #_sourceLocation) throws {
        let problem = try waitUntilQuiet()
        #expect(problem == nil, "not quiet: \(problem ?? "") \(comment())", sourceLocation: sourceLocation)
    }

    /// Polls `condition` every 20 ms until it holds or `timeoutMs` passes.
    static func wait(timeoutMs: Int64, until condition: () -> Bool) -> Bool {
        let deadline = Timestamps.nowMs() + timeoutMs
        while Timestamps.nowMs() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    /// Waits until each request id has an audit event of `stage`. Audit events are sent without
    /// waiting for their acknowledgement, some after the result they follow was acknowledged, so
    /// a quiet rig (`waitUntilQuiet`) can still be reading them.
    func waitForAudit(_ ids: [String], _ stage: AuditStage, timeoutMs: Int64 = 30_000) -> Bool {
        collector.wait(timeoutMs: timeoutMs) { snapshot in
            ids.allSatisfy { id in snapshot.audit.contains { $0.requestID == id && $0.stage == stage } }
        }
    }

    /// Audit events of one request, in the order they were consumed.
    func audit(_ requestID: String, _ stage: AuditStage? = nil) -> [AuditEvent] {
        collector.snapshot.audit.filter { $0.requestID == requestID && (stage == nil || $0.stage == stage) }
    }

    /// Simulator calls (across issuers) for a card id or Worldpay reference.
    func simulatorCalls(card: String) -> [SimulatorCall] {
        stack.simulator.calls.filter { $0.cardID == card }
    }
}

/// Wall-clock milliseconds plus an offset a test moves on (a worker's `clock`), so a period the
/// worker judges on its clock passes without waiting it out.
final class SteppedClock: Sendable {
    private let offsetMs = Atomic<Int64>(0)
    /// Now, as the worker sees it.
    func now() -> Int64 { Timestamps.nowMs() + offsetMs.load(ordering: .relaxed) }
    /// Moves the worker's time on by `ms`.
    func step(_ ms: Int64) { offsetMs.add(ms, ordering: .relaxed) }
}

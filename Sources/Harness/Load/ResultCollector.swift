import Contract
import Foundation
import Kafka
import Observability
import Pipeline
import Recovery
import Synchronization

/// Reads the results, dead-letter and audit topics in the background, from their beginning,
/// and keeps what arrived (with the time it was consumed) for the demo, benchmarks and tests.
public final class ResultCollector: Sendable {
    /// A result and when it was consumed (epoch ms).
    public struct Received: Sendable {
        /// The decoded result.
        public var result: ProvisioningResult
        /// Consumption time.
        public var consumedAtMs: Int64
        /// The raw record value.
        public var raw: [UInt8]
        /// Record headers.
        public var headers: [KafkaHeader]
    }

    /// Everything seen so far.
    public struct Snapshot: Sendable {
        /// Results by request id, in arrival order.
        public var results: [String: [Received]] = [:]
        /// Result records that did not decode (should stay empty).
        public var undecodableResults = 0
        /// Dead letters and parked messages.
        public var deadLetters: [DeadLetterEntry] = []
        /// Audit events.
        public var audit: [AuditEvent] = []
        /// Raw bytes of every record (values and header values) of every topic read: leak canaries scan these.
        public var rawRecords: [[UInt8]] = []

        /// Requests with a final result.
        public var finalCount: Int { results.values.filter { $0.contains { $0.result.isFinal } }.count }
        /// The final result of a request, if any.
        public func final(_ requestID: String) -> ProvisioningResult? { results[requestID]?.first { $0.result.isFinal }?.result }
    }

    private let consumer: KafkaConsumer
    private let state = Mutex(Snapshot())
    private let stopFlag = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let topics: TopicNames
    private let keepRaw: Bool

    /// Starts reading `topics` (results, dead letters, parked, audit) from the beginning.
    public init(properties: [String: String], topics: TopicNames, partitions: Int, keepRaw: Bool = false) throws {
        var configuration = properties
        configuration["group.id"] = "collector-\(UUID().uuidString)"
        configuration["enable.auto.commit"] = "false"
        consumer = try KafkaConsumer(configuration: configuration, rebalanceListener: nil)
        self.topics = topics
        self.keepRaw = keepRaw
        var assignment: [TopicPartitionOffset] = []
        for topic in [topics.results, topics.deadLetters, topics.parked, topics.audit] {
            for partition in 0..<Int32(partitions) {
                assignment.append(TopicPartitionOffset(topic: topic, partition: partition, offset: TopicPartitionOffset.beginning, metadata: nil))
            }
        }
        try consumer.assign(assignment)
        let thread = Thread { [self] in run() }
        thread.name = "result-collector"
        thread.start()
    }

    private func run() {
        while !stopFlag.load(ordering: .relaxed) {
            let batch = consumer.poll(maxMessages: 1_000, timeoutMs: 20)
            guard !batch.isEmpty else { continue }
            let now = Timestamps.nowMs()
            state.withLock { snapshot in
                for case .success(let message) in batch {
                    if keepRaw {
                        snapshot.rawRecords.append(message.value)
                        for header in message.headers { if let value = header.value { snapshot.rawRecords.append(value) } }
                    }
                    switch message.topic {
                    case topics.results:
                        if let result = try? ProvisioningResult.decode(message.value) {
                            snapshot.results[result.requestID, default: []].append(
                                Received(result: result, consumedAtMs: now, raw: message.value, headers: message.headers))
                        } else {
                            snapshot.undecodableResults += 1
                        }
                    case topics.audit:
                        if let event = try? AuditEvent.decode(message.value) { snapshot.audit.append(event) }
                    default:
                        snapshot.deadLetters.append(DeadLetterEntry(message: message))
                    }
                }
            }
        }
        consumer.close()
        done.signal()
    }

    /// A copy of what arrived so far.
    public var snapshot: Snapshot { state.withLock { $0 } }

    /// Waits until `condition` holds (checked every 20 ms) or `timeoutMs` passes; returns whether it held.
    public func wait(timeoutMs: Int64, until condition: (Snapshot) -> Bool) -> Bool {
        let deadline = Timestamps.nowMs() + timeoutMs
        while Timestamps.nowMs() < deadline {
            if state.withLock({ condition($0) }) { return true }
            usleep(20_000)
        }
        return state.withLock { condition($0) }
    }

    /// Stops reading.
    public func stop() {
        guard !stopFlag.exchange(true, ordering: .relaxed) else { return }
        done.wait()
    }
}

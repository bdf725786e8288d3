import Foundation
import Kafka

/// Reads a whole topic from the beginning, for assertions in end-to-end tests.
///
/// Each read uses a fresh consumer with manual assignment of every partition at the earliest offset
/// (no group, nothing committed), on a dedicated thread. Messages come in arrival order, which is
/// the log order within each partition.
public struct KafkaTestReader: Sendable {
    /// The cluster to read from.
    public var bootstrapServers: String
    /// Extra librdkafka properties for the reading consumer.
    public var configuration: [String: String]

    /// Creates a reader for the cluster at `bootstrapServers`.
    public init(bootstrapServers: String, configuration: [String: String] = [:]) {
        self.bootstrapServers = bootstrapServers
        self.configuration = configuration
    }

    /// Reads `topic` from the beginning until `predicate` holds for the messages read so far, and
    /// returns them; throws when it does not hold within `timeout` (saying how many were read).
    /// Waits for the topic to exist.
    public func read(topic: String, timeout: Duration = .seconds(20),
                     until predicate: @escaping @Sendable ([KafkaMessage]) -> Bool) async throws -> [KafkaMessage] {
        let outcome = try await collect(topic: topic, timeout: timeout, until: predicate)
        guard outcome.satisfied else {
            throw TestSupportError("""
                read \(outcome.messages.count) message(s) from '\(topic)' within \(timeout) but the expected \
                condition never held\(outcome.lastError.map { "; last consumer error: \($0)" } ?? "")
                """)
        }
        return outcome.messages
    }

    /// Reads `topic` from the beginning until at least `count` messages arrived.
    public func read(topic: String, count: Int, timeout: Duration = .seconds(20)) async throws -> [KafkaMessage] {
        try await read(topic: topic, timeout: timeout) { $0.count >= count }
    }

    /// Reads `topic` from the beginning for the whole of `duration` and returns everything seen
    /// (for checks that something did not happen, such as "no duplicate").
    public func readAll(topic: String, for duration: Duration) async throws -> [KafkaMessage] {
        try await collect(topic: topic, timeout: duration, until: { _ in false }).messages
    }

    /// Reads every message `topic` holds now: up to each partition's high watermark at the time of the
    /// call. Throws when the topic does not exist or reading takes longer than `timeout`.
    public func readExisting(topic: String, timeout: Duration = .seconds(20)) async throws -> [KafkaMessage] {
        let properties = consumerProperties()
        return try await DedicatedThread.run(name: "kafka-test-reader") { () throws -> [KafkaMessage] in
            let consumer = try KafkaConsumer(configuration: properties, rebalanceListener: nil)
            defer { consumer.close() }
            let deadline = ContinuousClock.now.advanced(by: timeout)
            let partitions = try Self.partitionCount(consumer, topic: topic, deadline: deadline)
            var remaining: [Int32: Int64] = [:]
            var starts: [TopicPartitionOffset] = []
            for partition in 0..<Int32(partitions) {
                let marks = try consumer.watermarks(TopicPartition(topic: topic, partition: partition), timeoutMs: 5_000)
                if marks.high > marks.low {
                    remaining[partition] = marks.high
                    starts.append(TopicPartitionOffset(topic: topic, partition: partition, offset: marks.low))
                }
            }
            try consumer.assign(starts)
            var messages: [KafkaMessage] = []
            while !remaining.isEmpty {
                guard ContinuousClock.now < deadline else {
                    throw TestSupportError("reading the existing messages of '\(topic)' took longer than \(timeout); \(messages.count) read, partitions still behind: \(remaining.keys.sorted())")
                }
                for result in consumer.poll(maxMessages: 500, timeoutMs: 50) {
                    guard case .success(let message) = result else { continue }
                    guard let end = remaining[message.partition], message.offset < end else { continue }
                    messages.append(message)
                    if message.offset + 1 >= end { remaining[message.partition] = nil }
                }
            }
            return messages
        }
    }

    private struct Outcome: Sendable {
        var messages: [KafkaMessage]
        var satisfied: Bool
        var lastError: KafkaError?
    }

    private func collect(topic: String, timeout: Duration,
                         until predicate: @escaping @Sendable ([KafkaMessage]) -> Bool) async throws -> Outcome {
        let properties = consumerProperties()
        return try await DedicatedThread.run(name: "kafka-test-reader") { () throws -> Outcome in
            let consumer = try KafkaConsumer(configuration: properties, rebalanceListener: nil)
            defer { consumer.close() }
            let deadline = ContinuousClock.now.advanced(by: timeout)
            let counted = Result { () throws(KafkaError) -> Int in
                try Self.partitionCount(consumer, topic: topic, deadline: deadline)
            }
            if case .failure(let error) = counted, error.code == .unknownTopicOrPartition {
                return Outcome(messages: [], satisfied: predicate([]), lastError: error)
            }
            let partitions = try counted.get()
            // Offset 0 rather than the logical "beginning": librdkafka then fetches at once instead of
            // first waiting for its offset-query timer (about 500 ms); auto.offset.reset=earliest covers
            // a log that no longer starts at 0.
            try consumer.assign((0..<Int32(partitions)).map {
                TopicPartitionOffset(topic: topic, partition: $0, offset: 0)
            })
            var outcome = Outcome(messages: [], satisfied: predicate([]), lastError: nil)
            while !outcome.satisfied && ContinuousClock.now < deadline {
                for result in consumer.poll(maxMessages: 500, timeoutMs: 20) {
                    switch result {
                    case .success(let message): outcome.messages.append(message)
                    case .failure(let error): outcome.lastError = error
                    }
                }
                outcome.satisfied = predicate(outcome.messages)
            }
            return outcome
        }
    }

    private func consumerProperties() -> [String: String] {
        KafkaTestConfiguration.consumer(bootstrapServers: bootstrapServers, group: UniqueName.make("test-reader"),
                                        ["enable.partition.eof": "false"]).merging(configuration) { _, new in new }
    }

    /// Waits until the topic exists (it may be created by the code under test) or the deadline passes.
    private static func partitionCount(_ consumer: KafkaConsumer, topic: String,
                                       deadline: ContinuousClock.Instant) throws(KafkaError) -> Int {
        while true {
            let result = Result { () throws(KafkaError) -> Int in try consumer.partitionCount(topic: topic, timeoutMs: 5_000) }
            switch result {
            case .success(let count):
                return count
            case .failure(let error) where error.code == .unknownTopicOrPartition && ContinuousClock.now < deadline:
                Thread.sleep(forTimeInterval: 0.05)
            case .failure(let error):
                throw error
            }
        }
    }
}

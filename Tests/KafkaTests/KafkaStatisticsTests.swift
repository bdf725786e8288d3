import Foundation
import Kafka
import Pipeline
import Synchronization
import Testing
import TestSupport

/// librdkafka's statistics reports, read from clients on the mock cluster: what a report says is
/// compared with what the test arranged (records produced, offsets committed, records queued).
@Suite("Statistics: librdkafka's reports read into KafkaStatistics", .timeLimit(.minutes(2)))
struct KafkaStatisticsTests {
    /// Keeps every report a client hands over.
    final class Reports: Sendable {
        private let reports = Mutex<[Result<KafkaStatistics, KafkaError>]>([])
        var handler: KafkaStatistics.Handler { { result in self.reports.withLock { $0.append(result) } } }
        var read: [KafkaStatistics] { reports.withLock { $0.compactMap { try? $0.get() } } }
        var failures: [KafkaError] { reports.withLock { $0.compactMap { if case .failure(let error) = $0 { error } else { nil } } } }
        var latest: KafkaStatistics? { read.last }
    }

    @Test("a group consumer's report: lag per assigned partition = produced - committed, high watermarks, fetch state active, the cluster's brokers with round trips, the group")
    func consumerReport() async throws {
        let cluster = try TestCluster(brokers: 3)
        let topic = try cluster.makeTopic("stats", partitions: 3)
        let other = try cluster.makeTopic("stats-other", partitions: 2)
        let produced: [Int32: Int64] = [0: 10, 1: 7, 2: 4]
        let committed: [Int32: Int64] = [0: 6, 1: 7, 2: 1]
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }
        for (partition, count) in produced {
            for index in 0..<count {
                _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("r\(index)".utf8), partition: partition))
            }
        }
        _ = try await producer.send(KafkaOutgoingMessage(topic: other, value: Array("x".utf8), partition: 0))
        let reports = Reports()
        let consumer = try KafkaConsumer(
            configuration: KafkaTestConfiguration.consumer(bootstrapServers: cluster.bootstrapServers, group: UniqueName.make("stats"),
                                                           ["statistics.interval.ms": "100", "enable.auto.commit": "false"]),
            rebalanceListener: nil, statistics: reports.handler)
        defer { consumer.close() }
        try consumer.subscribe([topic])
        let total = produced.values.reduce(0, +)
        let messages = await Polling.messages(from: consumer, count: Int(total), timeout: .seconds(30))
        #expect(messages.count == Int(total))
        try consumer.commit(committed.map { TopicPartitionOffset(topic: topic, partition: $0.key, offset: $0.value) }, synchronously: true)

        @Sendable func lags(_ report: KafkaStatistics) -> [Int32: Int64] {
            Dictionary(uniqueKeysWithValues: report.partitions.filter { $0.topic == topic && $0.partition >= 0 }.compactMap { partition in
                partition.consumerLag.map { (partition.partition, $0) }
            })
        }
        let expected = Dictionary(uniqueKeysWithValues: produced.map { ($0.key, $0.value - committed[$0.key]!) })
        let reached = await Polling.until(consumer, timeout: .seconds(20)) { reports.latest.map { lags($0) == expected } ?? false }
        let report = try #require(reports.latest)
        #expect(reached, "lag per partition \(lags(report)), expected \(expected) (produced - committed)")
        #expect(reports.failures.isEmpty, "\(reports.failures)")
        #expect(report.clientType == "consumer")
        #expect(report.clientName.hasPrefix("rdkafka#consumer"))
        for partition in report.partitions where partition.topic == topic && partition.partition >= 0 {
            #expect(partition.isDesired, "partition \(partition.partition) is assigned")
            #expect(partition.fetchState == "active", "\(partition)")
            #expect(partition.highWatermark == produced[partition.partition], "\(partition)")
            #expect(partition.committedOffset == committed[partition.partition], "\(partition)")
            #expect(partition.applicationOffset == produced[partition.partition], "every record was handed to the application: \(partition)")
        }
        #expect(Set(report.partitions.filter { $0.topic == topic && $0.partition >= 0 }.map(\.partition)) == [0, 1, 2])
        #expect(!report.partitions.contains { $0.topic == other && $0.isDesired }, "a topic not subscribed is not desired")
        let brokers = report.brokers.filter(\.isClusterBroker)
        #expect(Set(brokers.map(\.nodeID)) == Set(cluster.cluster.brokerIDs), "\(report.brokers.map { ($0.name, $0.nodeID, $0.source) })")
        #expect(brokers.allSatisfy { $0.state == "UP" } || brokers.contains { $0.state == "UP" })
        let measured = brokers.compactMap(\.roundTrip).filter { $0.count > 0 }
        #expect(!measured.isEmpty, "fetches to the leaders were answered in the last interval")
        for window in measured {
            #expect(window.average > 0 && window.p99 > 0 && window.maximum >= window.p50, "\(window)")
            #expect(window.average < 5_000_000, "a loopback round trip is far below 5 s: \(window)")
        }
        #expect(report.group?.assignmentSize == 3, "\(String(describing: report.group))")
        #expect(report.group?.state == "up", "\(String(describing: report.group))")
    }

    @Test("a producer's report: the queue holds the records lingering, then 0 once they are acknowledged")
    func producerReport() async throws {
        let cluster = try TestCluster(brokers: 1)
        let topic = try cluster.makeTopic("stats-queue", partitions: 2)
        let reports = Reports()
        let producer = try KafkaProducer(configuration: KafkaTestConfiguration.producer(bootstrapServers: cluster.bootstrapServers,
                                                                                      ["linger.ms": "1500", "statistics.interval.ms": "100"]),
                                         statistics: reports.handler)
        defer { producer.close(timeoutMs: 1_000) }
        let delivered = Atomic<Int>(0)
        let value = [UInt8](repeating: 0x61, count: 100)
        for index in 0..<7 {
            try producer.send(KafkaOutgoingMessage(topic: topic, value: value, partition: Int32(index % 2))) { result in
                if case .success = result { delivered.add(1, ordering: .relaxed) }
            }
        }
        let queued = try await Eventually.holds(within: .seconds(10)) { reports.read.contains { $0.queuedMessages == 7 } }
        #expect(queued, "reports: \(reports.read.map(\.queuedMessages))")
        let lingering = try #require(reports.read.first { $0.queuedMessages == 7 })
        #expect(lingering.queuedBytes >= 700, "\(lingering.queuedBytes) bytes for 7 records of 100")
        #expect(lingering.clientType == "producer")
        #expect(try await Eventually.holds(within: .seconds(15)) { delivered.load(ordering: .relaxed) == 7 })
        let drained = try await Eventually.holds(within: .seconds(10)) { reports.latest.map { $0.queuedMessages == 0 && $0.queuedBytes == 0 } ?? false }
        #expect(drained, "after every acknowledgement: \(String(describing: reports.latest.map { ($0.queuedMessages, $0.queuedBytes) }))")
        #expect(reports.failures.isEmpty)
    }

    @Test("bytes that are not a report are refused with badMessage; an object without the fields reads as empty")
    func unreadableReports() throws {
        #expect(throws: KafkaError.self) { try KafkaStatistics(json: Array("not json".utf8)) }
        do {
            _ = try KafkaStatistics(json: Array("[1,2]".utf8))
            Issue.record("an array is not a report")
        } catch {
            #expect(error.code == .badMessage)
        }
        let empty = try KafkaStatistics(json: Array("{}".utf8))
        #expect(empty.brokers.isEmpty && empty.partitions.isEmpty && empty.group == nil && empty.queuedMessages == 0)
    }
}

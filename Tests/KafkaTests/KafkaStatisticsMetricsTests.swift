import Kafka
import Observability
import Pipeline
import Testing

/// The worker's series from a statistics report: only bounded labels, and each report replaces
/// its client's series. The report is librdkafka's shape with the fields the mapping reads.
@Suite("Statistics: the worker's bounded provisioner_kafka_ series", .timeLimit(.minutes(1)))
struct KafkaStatisticsMetricsTests {
    static func report(partitions: [(topic: String, partition: Int, desired: Bool, state: String, lag: Int)], msgCnt: Int = 0,
                       type: String = "consumer") throws -> KafkaStatistics {
        var topics: [String: [String]] = [:]
        for entry in partitions {
            topics[entry.topic, default: []].append("""
                "\(entry.partition)": {"partition": \(entry.partition), "leader": 1, "desired": \(entry.desired), "fetch_state": "\(entry.state)",
                "consumer_lag": \(entry.lag), "hi_offset": 40, "committed_offset": 30, "app_offset": 40}
                """)
        }
        let topicJSON = topics.map { "\"\($0.key)\": {\"topic\": \"\($0.key)\", \"partitions\": {\($0.value.joined(separator: ","))}}" }
        let json = """
            {"name": "rdkafka#\(type)-1", "type": "\(type)", "ts": 1, "msg_cnt": \(msgCnt), "msg_size": \(msgCnt * 10),
             "brokers": {
               "127.0.0.1:9092/bootstrap": {"name": "127.0.0.1:9092/bootstrap", "nodeid": -1, "source": "configured", "state": "UP",
                                            "rtt": {"cnt": 3, "avg": 900, "p50": 800, "p99": 2000, "max": 2100}},
               ":0/internal": {"name": ":0/internal", "nodeid": -1, "source": "internal", "state": "INIT"},
               "GroupCoordinator": {"name": "GroupCoordinator", "nodeid": 1, "source": "logical", "state": "UP",
                                    "rtt": {"cnt": 5, "avg": 1, "p50": 1, "p99": 1, "max": 1}},
               "127.0.0.1:9092/1": {"name": "127.0.0.1:9092/1", "nodeid": 1, "source": "learned", "state": "UP",
                                    "rtt": {"cnt": 20, "avg": 1500, "p50": 1000, "p99": 12000, "max": 15000}},
               "127.0.0.1:9093/2": {"name": "127.0.0.1:9093/2", "nodeid": 2, "source": "learned", "state": "DOWN",
                                    "rtt": {"cnt": 0, "avg": 0, "p50": 0, "p99": 0, "max": 0}}
             },
             "topics": {\(topicJSON.joined(separator: ","))},
             "cgrp": {"state": "up", "join_state": "steady", "rebalance_cnt": 1, "assignment_size": 2}}
            """
        return try KafkaStatistics(json: Array(json.utf8))
    }

    @Test("series for the cluster's brokers and the own topic's assigned partitions only; unknown fetch states as other; a later report replaces the earlier")
    func boundedSeries() throws {
        let registry = MetricsRegistry()
        let metrics = KafkaStatisticsMetrics(registry: registry)
        let handler = metrics.handler(for: .requests, topic: "provisioning.requests")
        handler(.success(try Self.report(partitions: [
            ("provisioning.requests", 0, true, "active", 12), ("provisioning.requests", 1, true, "offset-query", -1),
            ("provisioning.requests", 2, false, "none", 5), ("provisioning.requests", -1, false, "none", -1),
            ("someone.elses.topic", 0, true, "active", 99), ("provisioning.requests", 3, true, "a-new-state", 0),
        ])))
        let text = registry.renderPrometheus()
        let series = text.split(separator: "\n").filter { $0.hasPrefix("provisioner_kafka_") }.map(String.init).sorted()
        #expect(series == [
            "provisioner_kafka_broker_rtt_average_seconds{broker=\"1\",client=\"requests\"} 0.0015",
            "provisioner_kafka_broker_rtt_p99_seconds{broker=\"1\",client=\"requests\"} 0.012",
            "provisioner_kafka_broker_up{broker=\"1\",client=\"requests\"} 1",
            "provisioner_kafka_broker_up{broker=\"2\",client=\"requests\"} 0",
            "provisioner_kafka_consumer_lag_messages{client=\"requests\",partition=\"0\",topic=\"provisioning.requests\"} 12",
            "provisioner_kafka_consumer_lag_messages{client=\"requests\",partition=\"3\",topic=\"provisioning.requests\"} 0",
            "provisioner_kafka_fetch_state{client=\"requests\",fetch_state=\"active\",partition=\"0\",topic=\"provisioning.requests\"} 1",
            "provisioner_kafka_fetch_state{client=\"requests\",fetch_state=\"offset-query\",partition=\"1\",topic=\"provisioning.requests\"} 1",
            "provisioner_kafka_fetch_state{client=\"requests\",fetch_state=\"other\",partition=\"3\",topic=\"provisioning.requests\"} 1",
            "provisioner_kafka_statistics_reports_total{client=\"requests\",readable=\"false\"} 0",
            "provisioner_kafka_statistics_reports_total{client=\"requests\",readable=\"true\"} 1",
        ], "\(series.joined(separator: "\n"))")

        // Partition 0 given up, partition 1 now active: the next report is all that remains.
        handler(.success(try Self.report(partitions: [("provisioning.requests", 1, true, "active", 4)])))
        #expect(registry.value(KafkaStatisticsMetrics.Name.consumerLag, labels: ["client": "requests", "topic": "provisioning.requests", "partition": "0"]) == nil)
        #expect(registry.value(KafkaStatisticsMetrics.Name.consumerLag, labels: ["client": "requests", "topic": "provisioning.requests", "partition": "1"]) == 4)
        #expect(registry.total(KafkaStatisticsMetrics.Name.fetchState, matching: ["client": "requests"]) == 1)
        #expect(registry.value(KafkaStatisticsMetrics.Name.fetchState,
                               labels: ["client": "requests", "topic": "provisioning.requests", "partition": "1", "fetch_state": "active"]) == 1)

        handler(.failure(KafkaError(code: .badMessage, message: "unreadable")))
        #expect(registry.value("provisioner_kafka_statistics_reports_total", labels: ["client": "requests", "readable": "false"]) == 1)
        #expect(registry.value(KafkaStatisticsMetrics.Name.consumerLag, labels: ["client": "requests", "topic": "provisioning.requests", "partition": "1"]) == 4,
                "an unreadable report leaves the last series")
    }

    @Test("clients do not replace each other's series; the producer's queue depth; the default interval unless configured")
    func clientsAndProducer() throws {
        let registry = MetricsRegistry()
        let metrics = KafkaStatisticsMetrics(registry: registry)
        metrics.handler(for: .requests, topic: "provisioning.requests")(.success(try Self.report(partitions: [("provisioning.requests", 0, true, "active", 3)])))
        metrics.handler(for: .reconcile, topic: "provisioning.reconcile")(.success(try Self.report(partitions: [("provisioning.reconcile", 0, true, "active", 2)])))
        metrics.handler(for: .producer, topic: nil)(.success(try Self.report(partitions: [("provisioning.results", 0, true, "none", -1)], msgCnt: 17, type: "producer")))
        #expect(registry.total(KafkaStatisticsMetrics.Name.consumerLag) == 5)
        #expect(registry.value("provisioner_kafka_producer_queue_messages", labels: ["client": "producer"]) == 17)
        #expect(registry.value("provisioner_kafka_producer_queue_bytes", labels: ["client": "producer"]) == 170)
        #expect(registry.total(KafkaStatisticsMetrics.Name.fetchState, matching: ["client": "producer"]) == 0, "a producer has no consumed partitions")
        #expect(registry.value("provisioner_kafka_producer_queue_messages", labels: ["client": "requests"]) == nil)
        #expect(registry.total("provisioner_kafka_broker_up") == 3, "one UP broker per client")

        #expect(KafkaStatisticsMetrics.withInterval([:])["statistics.interval.ms"] == "15000")
        #expect(KafkaStatisticsMetrics.withInterval(["statistics.interval.ms": "0"])["statistics.interval.ms"] == "0")
    }
}

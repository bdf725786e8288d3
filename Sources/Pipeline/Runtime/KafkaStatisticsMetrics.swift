import Kafka
import Observability

/// librdkafka's statistics reports as the worker's Prometheus series (`provisioner_kafka_…`).
///
/// Every label comes from a bounded set: `client` from `Client`; `broker` is the node id of a
/// broker of the cluster (learned from metadata; bootstrap entries, the internal broker and the
/// logical coordinator entries are left out); `topic` and `partition` only for the partitions of
/// the consumer's own topic assigned to it; `fetch_state` from librdkafka's fetch states (`other` for a
/// word this code does not know). Each report replaces its client's series, so a partition given
/// up or a broker gone disappears at the next report.
package struct KafkaStatisticsMetrics: Sendable {
    /// Which of the worker's Kafka clients reported.
    package enum Client: String, Sendable, CaseIterable {
        /// The producer of results, audit, markers, jobs and dead letters.
        case producer
        /// The requests consumer (the worker group).
        case requests
        /// The reconciliation consumer (`<group_id>.reconcile`).
        case reconcile
    }

    /// The report interval the worker sets unless `statistics.interval.ms` is configured (0 turns
    /// reports off): frequent enough for a scrape every 15-30 s, and a report costs well under a
    /// millisecond of the poll thread.
    package static let defaultIntervalMs = 15_000

    /// librdkafka's partition fetch states: the only values of the `fetch_state` label besides `other`.
    package static let fetchStates: Set<String> = ["none", "stopping", "stopped", "offset-query", "offset-wait", "validate-epoch-wait", "active"]

    /// Series names.
    package enum Name {
        package static let reports = "provisioner_kafka_statistics_reports_total"
        package static let rttAverage = "provisioner_kafka_broker_rtt_average_seconds"
        package static let rttP99 = "provisioner_kafka_broker_rtt_p99_seconds"
        package static let brokerUp = "provisioner_kafka_broker_up"
        package static let queueMessages = "provisioner_kafka_producer_queue_messages"
        package static let queueBytes = "provisioner_kafka_producer_queue_bytes"
        /// Per assigned partition: records after the committed offset, as the client sees the high watermark.
        package static let consumerLag = "provisioner_kafka_consumer_lag_messages"
        /// Per assigned partition: 1 with the current fetch state as `fetch_state`.
        package static let fetchState = "provisioner_kafka_fetch_state"
    }

    let registry: MetricsRegistry

    /// Exports into `registry`.
    package init(registry: MetricsRegistry) {
        self.registry = registry
    }

    /// `properties` with `statistics.interval.ms` set to the default unless it is set already.
    package static func withInterval(_ properties: [String: String]) -> [String: String] {
        var properties = properties
        if properties["statistics.interval.ms"] == nil { properties["statistics.interval.ms"] = String(defaultIntervalMs) }
        return properties
    }

    /// The handler for `client`'s reports; `topic` is the topic it consumes (nil for the
    /// producer). Its report counters start at 0.
    package func handler(for client: Client, topic: String?) -> KafkaStatistics.Handler {
        for readable in [true, false] { _ = reportCounter(client, readable: readable) }
        return { [self] result in
            switch result {
            case .success(let statistics): record(statistics, client: client, topic: topic)
            case .failure: reportCounter(client, readable: false).increment()
            }
        }
    }

    /// Replaces `client`'s series with what `statistics` says.
    package func record(_ statistics: KafkaStatistics, client: Client, topic: String?) {
        let scope: MetricLabels = ["client": client.rawValue]
        var average: [MetricLabels: Double] = [:]
        var p99: [MetricLabels: Double] = [:]
        var up: [MetricLabels: Double] = [:]
        for broker in statistics.brokers where broker.isClusterBroker {
            let labels: MetricLabels = ["client": client.rawValue, "broker": String(broker.nodeID)]
            up[labels] = broker.state == "UP" ? 1 : 0
            // A window without samples says nothing about the round trip: no series rather than 0.
            if let window = broker.roundTrip, window.count > 0 {
                average[labels] = window.average / 1_000_000
                p99[labels] = window.p99 / 1_000_000
            }
        }
        registry.replaceGauges(Name.rttAverage, help: "Mean round trip of requests to the broker over the last statistics interval, seconds (librdkafka).",
                               scope: scope, with: average)
        registry.replaceGauges(Name.rttP99, help: "99th percentile round trip of requests to the broker over the last statistics interval, seconds (librdkafka).",
                               scope: scope, with: p99)
        registry.replaceGauges(Name.brokerUp, help: "1 when the client's connection to the broker is up (librdkafka statistics).", scope: scope, with: up)
        if client == .producer {
            registry.replaceGauges(Name.queueMessages, help: "Messages in the producer's local queue, not yet acknowledged (librdkafka msg_cnt).",
                                   scope: scope, with: [scope: Double(statistics.queuedMessages)])
            registry.replaceGauges(Name.queueBytes, help: "Bytes of the messages in the producer's local queue (librdkafka msg_size).",
                                   scope: scope, with: [scope: Double(statistics.queuedBytes)])
        }
        if let topic {
            var lag: [MetricLabels: Double] = [:]
            var fetch: [MetricLabels: Double] = [:]
            for partition in statistics.partitions where partition.topic == topic && partition.partition >= 0 && partition.isDesired {
                let labels = ["client": client.rawValue, "topic": topic, "partition": String(partition.partition)]
                if let value = partition.consumerLag { lag[MetricLabels(labels)] = Double(value) }
                let state = Self.fetchStates.contains(partition.fetchState) ? partition.fetchState : "other"
                fetch[MetricLabels(labels.merging(["fetch_state": state]) { $1 })] = 1
            }
            registry.replaceGauges(Name.consumerLag,
                                   help: "Records after the committed offset of each assigned partition, against the high watermark the client last fetched (librdkafka consumer_lag).",
                                   scope: scope, with: lag)
            registry.replaceGauges(Name.fetchState, help: "Fetch state of each assigned partition as the client sees it (the series with value 1 names it).",
                                   scope: scope, with: fetch)
        }
        reportCounter(client, readable: true).increment()
    }

    private func reportCounter(_ client: Client, readable: Bool) -> Counter {
        registry.counter(Name.reports, help: "librdkafka statistics reports received, by client and whether they could be read.",
                         labels: ["client": client.rawValue, "readable": String(readable)])
    }
}

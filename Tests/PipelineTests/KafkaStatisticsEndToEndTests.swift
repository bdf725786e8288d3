import Contract
import Foundation
import HTTP
import Kafka
import Observability
import Pipeline
import Testing

/// A fresh worker's `/metrics` carries its Kafka clients' statistics (librdkafka's reports), with
/// values the test arranged: records waiting behind a slow call are its lag, caught up is 0.
@Suite("End to end: librdkafka statistics on a worker's /metrics", .serialized, .timeLimit(.minutes(5)))
struct KafkaStatisticsEndToEndTests {
    private static func scrape(_ client: HTTPClient, port: UInt16) async throws -> PrometheusExposition {
        let response = try await client.execute(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:\(port)/metrics", timeoutMs: 10_000)).get()
        return PrometheusExposition(String(decoding: response.body, as: UTF8.self))
    }

    /// Scrapes every `interval` until `condition` holds for a scrape (true) or `timeout` passed (false).
    private static func scrapeUntil(_ client: HTTPClient, port: UInt16, within timeout: Duration, every interval: Duration = .milliseconds(100),
                                    _ condition: (PrometheusExposition) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            if condition(try await scrape(client, port: port)) { return true }
            if ContinuousClock.now >= deadline { return false }
            try await Task.sleep(for: interval)
        }
    }

    private static func values(_ exposition: PrometheusExposition, _ name: String, _ labels: [String: String]) -> [Double] {
        exposition.samples.filter { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }.compactMap(\.number)
    }

    @Test("requests queued behind a slow call show as the partition's lag, 0 once answered; fetch state, broker round trips and up, producer queue, reports")
    func seriesOnMetrics() async throws {
        let rig = try PipelineRig(partitions: 3)
        defer { rig.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let worker = try rig.startWorker("stats") { configuration in
            configuration.kafkaConsumer["statistics.interval.ms"] = "200"
            configuration.kafkaProducer["statistics.interval.ms"] = "200"
        }
        try rig.formGroupAndWarmUp()
        let port = try #require(worker.observabilityPort)
        let topic = rig.stack.topics.requests
        let lagName = KafkaStatisticsMetrics.Name.consumerLag
        // Every partition answered its warm-up request and committed it: caught up.
        let caughtUp = try await Self.scrapeUntil(client, port: port, within: .seconds(20)) { exposition in
            (0..<3).allSatisfy { Self.values(exposition, lagName, ["client": "requests", "topic": topic, "partition": String($0)]) == [0] }
        }
        #expect(caughtUp, "lag 0 on every partition after the warm-up")

        // Three requests for one card on partition 1: per-card order calls them one after another
        // (3 s each), so none of them is committed while the first is called.
        var ids: [String] = []
        for _ in 0..<3 {
            let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_stats-slow-3000")
            ids.append(request.requestID)
            try rig.send(request, partition: 1)
        }
        var seen: [Double] = []
        let queued = try await Self.scrapeUntil(client, port: port, within: .seconds(10)) { exposition in
            seen.append(contentsOf: Self.values(exposition, lagName, ["client": "requests", "topic": topic, "partition": "1"]))
            return seen.last == 3
        }
        #expect(queued, "lag of partition 1 while 3 records wait behind a slow call: \(seen)")
        #expect(rig.collector.wait(timeoutMs: 30_000) { snapshot in ids.allSatisfy { snapshot.final($0) != nil } })
        var final: PrometheusExposition?
        let drained = try await Self.scrapeUntil(client, port: port, within: .seconds(10)) { exposition in
            final = exposition
            return Self.values(exposition, lagName, ["client": "requests", "topic": topic, "partition": "1"]) == [0]
        }
        #expect(drained, "lag 0 once the three are answered and committed")
        let exposition = try #require(final)
        for partition in 0..<3 {
            #expect(Self.values(exposition, KafkaStatisticsMetrics.Name.fetchState,
                                ["client": "requests", "topic": topic, "partition": String(partition), "fetch_state": "active"]) == [1])
        }
        #expect(Self.values(exposition, KafkaStatisticsMetrics.Name.fetchState, ["client": "requests"]).count == 3, "one state per assigned partition")
        for client in KafkaStatisticsMetrics.Client.allCases {
            #expect(Self.values(exposition, "provisioner_kafka_broker_up", ["client": client.rawValue, "broker": "1"]) == [1], "\(client)")
            #expect((Self.values(exposition, "provisioner_kafka_statistics_reports_total", ["client": client.rawValue, "readable": "true"]).first ?? 0) > 0)
            #expect(Self.values(exposition, "provisioner_kafka_statistics_reports_total", ["client": client.rawValue, "readable": "false"]) == [0])
        }
        #expect(Set(exposition.samples.filter { $0.name.hasPrefix("provisioner_kafka_broker") }.compactMap { $0.labels["broker"] }) == ["1"],
                "the embedded cluster's one broker only, no bootstrap or coordinator entries")
        let rtt = Self.values(exposition, "provisioner_kafka_broker_rtt_average_seconds", ["client": "requests", "broker": "1"])
        #expect(rtt.count == 1 && rtt.allSatisfy { $0 > 0 && $0 < 5 }, "fetches are answered continuously: \(rtt)")
        let queueDepth = Self.values(exposition, "provisioner_kafka_producer_queue_messages", ["client": "producer"])
        #expect(queueDepth.count == 1 && queueDepth.allSatisfy { $0 >= 0 && $0 < 1_000 }, "\(queueDepth)")
        #expect(Self.values(exposition, lagName, ["client": "reconcile"]).allSatisfy { $0 >= 0 })
    }
}

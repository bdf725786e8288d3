@testable import Console
import Contract
import Foundation
import Kafka
import Observability
@testable import Recovery
import Testing
import TestSupport

/// The Lag page names, per partition, the worker that has it paused: read from the workers'
/// `provisioner_partition_paused` gauges, first from a hand-written scrape, then from a real worker
/// that pauses its partitions for backpressure (a `max_pending` of 2 and slow issuer calls).
@Suite("Console: paused partitions per partition on the Lag page", .serialized, .timeLimit(.minutes(5)))
struct ConsolePausedPartitionTests {
    @Test("the parser: value 1 is paused by that endpoint, 0 and unreadable samples are not, no scrape is unknown")
    func parsesTheGauge() {
        let a = PrometheusExposition("""
            # TYPE provisioner_partition_paused gauge
            provisioner_partition_paused{partition="0",topic="req"} 0
            provisioner_partition_paused{partition="1",topic="req"} 1
            provisioner_partition_paused{partition="x",topic="req"} 1
            provisioner_partition_paused{topic="req"} 1
            provisioner_paused_partitions 1
            """)
        let b = PrometheusExposition("""
            provisioner_partition_paused{partition="1",topic="req"} 1
            provisioner_partition_paused{partition="0",topic="rec"} 1
            provisioner_partition_paused{partition="2",topic="req"} NaN
            """)
        let paused = PausedPartitions(MetricsScrape(atMs: 0, expositions: ["http://w2/metrics": b, "http://w1/metrics": a], unreachable: []))
        #expect(paused.cell(topic: "req", partition: 1) == "paused by http://w1/metrics, http://w2/metrics")
        #expect(paused.cell(topic: "req", partition: 0) == "no")
        #expect(paused.cell(topic: "rec", partition: 0) == "paused by http://w2/metrics")
        #expect(paused.cell(topic: "req", partition: 2) == "no")
        #expect(paused.cell(topic: "rec", partition: 1) == "no")
        #expect(PausedPartitions(nil).cell(topic: "req", partition: 1) == "unknown")
    }

    @Test("a worker paused for backpressure: every requests partition shows paused by its endpoint, then not paused once it has answered")
    func realWorkerPauses() async throws {
        let rig = try ConsoleStackRig(replayableCount: 0, name: "console-paused") { configuration in
            configuration.maxPending = 2
            configuration.scheduler.globalLimit = 1
        }
        defer { rig.stop() }
        let browser = ConsoleClient(base: rig.baseURL)
        #expect(try await browser.login(ConsoleStackRig.aliceToken) == 303)
        let topic = rig.stack.topics.requests
        let endpoint = try #require(rig.context.configuration.metricsEndpoints.first)
        func cells() async throws -> [String] {
            let page = try await browser.get("/lag").body
            return (0..<rig.stack.partitions).map { partition in
                page.components(separatedBy: "id=\"paused-\(topic)-\(partition)\">").dropFirst().first?
                    .components(separatedBy: "</td>").first ?? "missing"
            }
        }
        func waitFor(_ timeoutMs: Int64, _ condition: ([String]) -> Bool) async throws -> [String] {
            let deadline = Timestamps.nowMs() + timeoutMs
            var last = try await cells()
            while !condition(last) && Timestamps.nowMs() < deadline {
                try await Task.sleep(for: .milliseconds(200))
                last = try await cells()
            }
            return last
        }
        // Joined and caught up: nothing paused (the marker catch-up pause has ended).
        let joinDeadline = Timestamps.nowMs() + 60_000
        while rig.worker.assignedPartitionCount < rig.stack.partitions && Timestamps.nowMs() < joinDeadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        try #require(rig.worker.assignedPartitionCount == rig.stack.partitions)
        let idle = try await waitFor(60_000) { $0.allSatisfy { $0 == "no" } }
        #expect(idle.allSatisfy { $0 == "no" }, "\(idle)")

        // One call at a time, 1.8 s each: two requests held reach max_pending and pause every partition.
        let ids = try (0..<3).map { index in
            let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay,
                                                    cardID: "pm_pause\(index)_\(Crypto.hex(Crypto.randomBytes(4)))-slow-1800")
            _ = try rig.producer.sendAndWait(KafkaOutgoingMessage(topic: topic, key: request.key, value: request.value))
            return request.requestID
        }
        let paused = try await waitFor(20_000) { $0.allSatisfy { $0 == "paused by \(endpoint)" } }
        #expect(paused.allSatisfy { $0 == "paused by \(endpoint)" }, "\(paused)")

        // Every request answered: resumed, and the page says so.
        let reader = KafkaTestReader(bootstrapServers: rig.stack.bootstrapServers)
        let results = try await reader.read(topic: rig.stack.topics.results, timeout: .seconds(60)) { messages in
            Set(messages.compactMap { try? ProvisioningResult.decode($0.value) }.filter { $0.isFinal }.map(\.requestID)).isSuperset(of: ids)
        }
        #expect(!results.isEmpty)
        let resumed = try await waitFor(20_000) { $0.allSatisfy { $0 == "no" } }
        #expect(resumed.allSatisfy { $0 == "no" }, "\(resumed)")
    }
}

/// The Lag page's client columns, read from the workers' librdkafka statistics series.
@Suite("Console: the Kafka clients' view of each partition on the Lag page", .timeLimit(.minutes(1)))
struct ConsoleClientPartitionTests {
    @Test("lag and fetch state per partition and worker, round trips per client and broker; nothing known before a scrape")
    func parsesTheStatisticsSeries() {
        let a = PrometheusExposition("""
            provisioner_kafka_consumer_lag_messages{client="requests",partition="0",topic="req"} 12
            provisioner_kafka_consumer_lag_messages{client="requests",partition="x",topic="req"} 3
            provisioner_kafka_fetch_state{client="requests",fetch_state="active",partition="0",topic="req"} 1
            provisioner_kafka_fetch_state{client="requests",fetch_state="offset-query",partition="1",topic="req"} 1
            provisioner_kafka_broker_rtt_average_seconds{broker="1",client="requests"} 0.0015
            provisioner_kafka_broker_rtt_p99_seconds{broker="1",client="requests"} 0.012
            """)
        let b = PrometheusExposition("""
            provisioner_kafka_consumer_lag_messages{client="requests",partition="0",topic="req"} 0
            provisioner_kafka_fetch_state{client="requests",fetch_state="stopped",partition="0",topic="req"} 1
            """)
        let states = ClientPartitionStates(MetricsScrape(atMs: 0, expositions: ["http://w2/metrics": b, "http://w1/metrics": a], unreachable: []))
        let handedOver = states.cells(topic: "req", partition: 0)
        #expect(handedOver.lag == "12 at http://w1/metrics, 0 at http://w2/metrics")
        #expect(handedOver.fetchState == "active at http://w1/metrics, stopped at http://w2/metrics")
        #expect(states.cells(topic: "req", partition: 1) == ("not known", "offset-query"))
        #expect(states.cells(topic: "req", partition: 2) == ("not reported", "not reported"))
        #expect(states.roundTrips == [.init(endpoint: "http://w1/metrics", client: "requests", broker: "1", average: 0.0015, p99: 0.012)])
        #expect(ConsoleApp.milliseconds(0.0015) == "1.5 ms" && ConsoleApp.milliseconds(nil) == "-")
        #expect(ClientPartitionStates(nil).cells(topic: "req", partition: 0) == ("unknown", "unknown"))
    }
}

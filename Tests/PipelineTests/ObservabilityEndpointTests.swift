import Contract
import Foundation
import Harness
import HTTP
import Kafka
import Observability
import Pipeline
import Testing

/// `/healthz`, `/readyz` and `/metrics` of a running worker.
@Suite("End to end: observability endpoints", .serialized, .timeLimit(.minutes(10)))
struct ObservabilityEndpointTests {
    private static func get(_ client: HTTPClient, port: UInt16, _ path: String) async throws -> (status: Int, body: String) {
        let result = await client.execute(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:\(port)\(path)", timeoutMs: 10_000))
        let response = try result.get()
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    @Test("healthz answers 200, readyz 503 until partitions are assigned then 200, metrics has the documented families")
    func endpoints() async throws {
        let rig = try PipelineRig(partitions: 3)
        defer { rig.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let configuration = try rig.stack.configuration(groupID: rig.groupID, workerID: "observed")
        // Built but not started: alive, not ready.
        let worker = try Worker(configuration: configuration, environment: rig.stack.environment,
                                logger: Logger(label: "observed", minimumLevel: .info, handler: rig.logs))
        let port = try #require(worker.observabilityPort, "http.listen did not start the observability server")
        var started = false
        defer {
            if started {
                worker.shutdown()
                worker.waitUntilStopped()
            }
        }
        #expect(try await Self.get(client, port: port, "/healthz").status == 200)
        let early = try await Self.get(client, port: port, "/readyz")
        #expect(early.status == 503, "readyz before start: \(early.status) \(early.body)")
        #expect(try await Self.get(client, port: port, "/nowhere").status == 404)

        try worker.start()
        started = true
        var ready = (status: 0, body: "")
        let deadline = Timestamps.nowMs() + 60_000
        while Timestamps.nowMs() < deadline {
            ready = try await Self.get(client, port: port, "/readyz")
            if ready.status == 200 { break }
            #expect(ready.status == 503, "readyz while joining: \(ready.status)")
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(ready.status == 200, "readyz never became 200: \(ready.body)")
        #expect(worker.assignedPartitionCount > 0, "ready without partitions")
        #expect(try await Self.get(client, port: port, "/healthz").status == 200)

        // One request of each outcome family so every documented series exists.
        let provisioned = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_obs_\(Crypto.hex(Crypto.randomBytes(4)))")
        let expired = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: "pm_obs_\(Crypto.hex(Crypto.randomBytes(4)))",
                                                startedAtMs: Timestamps.nowMs() - 30_000)
        try rig.send(provisioned)
        try rig.send(expired)
        try #require(rig.waitForFinals([provisioned.requestID, expired.requestID]))
        // A result can reach the collector before its worker counts the acknowledgement.
        try #require(PipelineRig.wait(timeoutMs: 10_000) { worker.metrics.total("provisioner_requests_total") == 2 })

        let metrics = try await Self.get(client, port: port, "/metrics")
        #expect(metrics.status == 200)
        // The `_ms` histograms are deprecated (kept one release beside the `_seconds` ones).
        for family in ["provisioner_requests_total", "provisioner_issuer_latency_seconds", "provisioner_end_to_end_latency_seconds",
                       "provisioner_overhead_seconds", "provisioner_issuer_latency_ms", "provisioner_end_to_end_latency_ms",
                       "provisioner_overhead_ms", "provisioner_in_flight", "provisioner_paused_partitions", "provisioner_deadline_misses_total",
                       "provisioner_expired_total"] {
            #expect(metrics.body.contains("# TYPE \(family) "), "/metrics lacks the \(family) family")
        }
        let lines = metrics.body.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("provisioner_requests_total{") && $0.contains("status=\"provisioned\"") && $0.hasSuffix(" 1") },
                "no provisioned series counting 1")
        #expect(lines.contains { $0.hasPrefix("provisioner_expired_total{") && $0.contains("program=\"demo-imprint\"") && $0.hasSuffix(" 1") },
                "no expired series counting 1")
        for histogram in ["provisioner_issuer_latency_seconds", "provisioner_issuer_latency_ms"] {
            #expect(lines.contains { $0.hasPrefix("\(histogram)_count") && $0.hasSuffix(" 1") },
                    "\(histogram) did not count exactly the one call")
        }
        // Labels are bounded words: no request id, card id or other identifier leaks into them.
        for request in [provisioned, expired] {
            #expect(!metrics.body.contains(request.requestID))
            #expect(!metrics.body.contains(String(decoding: request.key ?? [], as: UTF8.self)))
        }

        // Once asked to stop, the worker is no longer ready.
        worker.shutdown()
        #expect(try await Self.get(client, port: port, "/readyz").status == 503)
    }
}

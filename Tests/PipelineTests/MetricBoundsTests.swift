import Contract
import Foundation
import Kafka
import Observability
@testable import Pipeline
import Recovery
import Testing

/// Metric series are never freed, so a label fed from message content lets a producer
/// grow `/metrics` without bound; and a flood that evicts the nonce guard or the duplicate filter
/// must show on `/metrics`.
@Suite("Metrics: bounded labels and exported evictions", .timeLimit(.minutes(5)))
struct MetricBoundsTests {
    static let configured = ProgramConfiguration(name: "acme-imprint", issuer: .imprint, baseURL: "https://api.imprint.example",
                                                 apiKey: .environment("ACME_KEY"))

    /// The rendered body with every sample value masked: what changes with a new series, not with a count.
    static func series(_ body: String) -> [String] {
        body.split(separator: "\n").map { line in
            line.hasPrefix("#") ? String(line) : String(line[..<(line.lastIndex(of: " ") ?? line.endIndex)])
        }
    }

    static func rejection(program: String, index: Int) -> ProvisioningResult {
        ProvisioningResult(requestID: "req-\(index)", program: program, issuer: nil, wallet: .googlePay, kind: nil,
                           status: .rejected, isFinal: true, code: .unknownProgram, message: "not configured", nextAction: .surfaceError)
    }

    @Test("10,000 distinct unknown program names leave the /metrics body the same size")
    func unknownProgramsDoNotGrowMetrics() {
        let registry = MetricsRegistry()
        let metrics = WorkerMetrics(registry: registry, programs: [Self.configured])
        metrics.countResult(Self.rejection(program: "acme-imprint", index: 0))
        // One of each so every family exists before the flood, then 10,000 names (9,999 after the
        // first keeps the count's digits, so the byte size can be compared exactly).
        metrics.countResult(Self.rejection(program: "flood-first", index: 1))
        let before = registry.renderPrometheus()
        for index in 2...10_000 {
            metrics.countResult(Self.rejection(program: "flood-\(index)-\(UUID().uuidString)", index: index))
        }
        let after = registry.renderPrometheus()
        #expect(after.utf8.count - before.utf8.count <= 4, "grew from \(before.utf8.count) to \(after.utf8.count) bytes")
        #expect(Self.series(after) == Self.series(before), "new series appeared")
        #expect(!after.contains("flood-"))
        #expect(registry.value("provisioner_requests_total", labels: ["program": "unknown", "wallet": "google_pay", "status": "rejected"]) == 10_000)
        #expect(registry.value("provisioner_requests_total", labels: ["program": "acme-imprint", "wallet": "google_pay", "status": "rejected"]) == 1)
    }

    @Test("refusal, dead-letter and breaker labels outside configuration and the code's enums become unknown / other")
    func otherLabelsAreBounded() {
        let registry = MetricsRegistry()
        let metrics = WorkerMetrics(registry: registry, programs: [Self.configured])
        metrics.countRefusal(reason: "rate_limited", program: "acme-imprint")
        metrics.countDeadLetter(code: DeadLetterCode(.notJSON).rawValue, parked: false)
        metrics.countBreakerTransition(endpoint: Self.configured.endpoint, to: CircuitBreaker.State.open.rawValue)
        let before = registry.renderPrometheus()
        for index in 0..<1_000 {
            metrics.countRefusal(reason: "rate_limited", program: "stranger-\(index)")
            metrics.countRefusal(reason: "reason-\(index)", program: "acme-imprint")
            metrics.countDeadLetter(code: "code-\(index)", parked: true)
            metrics.countBreakerTransition(endpoint: "imprint https://elsewhere-\(index).example", to: "state-\(index)")
        }
        let after = registry.renderPrometheus()
        #expect(!after.contains("stranger-") && !after.contains("reason-") && !after.contains("code-") && !after.contains("elsewhere-")
                && !after.contains("state-"))
        // Exactly one new series per family: the bounded catch-all.
        #expect(Self.series(after).count == Self.series(before).count + 4)
        #expect(registry.value("provisioner_refusals_total", labels: ["reason": "rate_limited", "program": "unknown"]) == 1_000)
        #expect(registry.value("provisioner_refusals_total", labels: ["reason": "unknown", "program": "acme-imprint"]) == 1_000)
        #expect(registry.value("provisioner_dead_letters_total", labels: ["code": "other", "parked": "true"]) == 1_000)
        #expect(registry.value("provisioner_dead_letters_total", labels: ["code": "not_json", "parked": "false"]) == 1)
        #expect(registry.value("provisioner_breaker_transitions_total", labels: ["endpoint": "unknown", "state": "unknown"]) == 1_000)
        #expect(registry.value("provisioner_breaker_transitions_total", labels: ["endpoint": Self.configured.endpoint, "state": "open"]) == 1)
    }

    @Test("a flood past the nonce guard's capacity: provisioner_nonce_guard_evictions_total equals the nonces evicted")
    func nonceGuardEvictionsAreExported() throws {
        let registry = MetricsRegistry()
        let metrics = WorkerMetrics(registry: registry, programs: [Self.configured])
        let guardian = NonceGuard(horizonMs: 60_000, maxEntries: 100)
        metrics.exportEvictions(nonceGuard: guardian, duplicates: DuplicateFilter(horizonMs: 60_000))
        #expect(registry.renderPrometheus().contains("# TYPE provisioner_nonce_guard_evictions_total counter\nprovisioner_nonce_guard_evictions_total 0\n"))
        let now: Int64 = 1_000_000
        for index in 0..<250 {
            #expect(guardian.checkAndRecord(Sensitive("nonce-\(index)"), identity: RequestIdentity(program: "p", requestID: "r-\(index)"), nowMs: now + Int64(index)) == .fresh)
        }
        #expect(guardian.count == 100)
        #expect(registry.value("provisioner_nonce_guard_evictions_total") == 150)
        #expect(registry.renderPrometheus().contains("\nprovisioner_nonce_guard_evictions_total 150\n"))
        // The evicted nonces are really forgotten: the first one is accepted again.
        #expect(guardian.checkAndRecord(Sensitive("nonce-0"), identity: RequestIdentity(program: "p", requestID: "r-again"), nowMs: now + 300) == .fresh)
        // Expiry at the horizon is not an eviction.
        _ = guardian.checkAndRecord(Sensitive("late"), identity: RequestIdentity(program: "p", requestID: "r-late"), nowMs: now + 120_000)
        #expect(registry.value("provisioner_nonce_guard_evictions_total") == 151, "only the re-recorded nonce-0 pushed one more out")
    }

    @Test("a flood past the duplicate filter's capacity: provisioner_duplicate_filter_evictions_total counts evictions, not horizon expiry")
    func duplicateFilterEvictionsAreExported() {
        let registry = MetricsRegistry()
        let metrics = WorkerMetrics(registry: registry, programs: [Self.configured])
        let duplicates = DuplicateFilter(horizonMs: 60_000, maxEntries: 100)
        metrics.exportEvictions(nonceGuard: NonceGuard(), duplicates: duplicates)
        let now: Int64 = 1_000_000
        let owner = DuplicateFilter.Owner(partition: TopicPartition(topic: "requests", partition: 0), generation: 1)
        for index in 0..<250 {
            #expect(duplicates.begin(RequestIdentity(program: "p", requestID: "id-\(index)"), owner: owner, nowMs: now) == .fresh)
            duplicates.finish(RequestIdentity(program: "p", requestID: "id-\(index)"), owner: owner, nowMs: now)
        }
        #expect(duplicates.count == 100)
        #expect(registry.value("provisioner_duplicate_filter_evictions_total") == 150)
        #expect(registry.renderPrometheus().contains("# TYPE provisioner_duplicate_filter_evictions_total counter\nprovisioner_duplicate_filter_evictions_total 150\n"))
        // The evicted ids are really forgotten: a copy of the first would be processed again.
        #expect(duplicates.begin(RequestIdentity(program: "p", requestID: "id-0"), owner: owner, nowMs: now) == .fresh)
        #expect(duplicates.begin(RequestIdentity(program: "p", requestID: "id-249"), owner: owner, nowMs: now) == .completed)
        // Past the horizon every entry expires: none of that is an eviction.
        #expect(duplicates.begin(RequestIdentity(program: "p", requestID: "id-late"), owner: owner, nowMs: now + 60_001) == .fresh)
        duplicates.finish(RequestIdentity(program: "p", requestID: "id-late"), owner: owner, nowMs: now + 60_001)
        #expect(duplicates.count == 2, "id-0 in flight and id-late")
        #expect(registry.value("provisioner_duplicate_filter_evictions_total") == 150)
    }
}

/// The same bound through a running worker: requests naming programs it does not configure, and
/// undecodable requests naming anything, never add a series to its `/metrics`.
@Suite("End to end: /metrics labels come from configuration", .serialized, .timeLimit(.minutes(10)))
struct MetricLabelsEndToEndTests {
    @Test("unknown and rejected program names from messages are counted as program=\"unknown\", never as themselves")
    func messageProgramNamesNeverBecomeLabels() throws {
        let rig = try PipelineRig(partitions: 3)
        defer { rig.stop() }
        let worker = try rig.startWorker("labels")
        try rig.formGroupAndWarmUp()
        let registry = try #require(rig.metrics(of: worker))
        func send(_ count: Int, round: Int) throws -> [String] {
            var ids: [String] = []
            for index in 0..<count {
                let unknown = try rig.factory.provision(program: "nope-\(round)-\(index)", wallet: .googlePay,
                                                        cardID: "pm_labels_\(round)_\(index)")
                try rig.send(unknown)
                let rejectedID = "labels-rejected-\(round)-\(index)"
                try rig.send(key: nil, value: Array(#"{"request_id":"\#(rejectedID)","program":"junk-\#(round)-\#(index)"}"#.utf8))
                ids += [unknown.requestID, rejectedID]
            }
            return ids
        }
        let first = try send(1, round: 0)
        #expect(rig.waitForFinals(first), "missing: \(rig.missingFinals(first))")
        try rig.expectQuiet()
        let before = MetricBoundsTests.series(registry.renderPrometheus())
        let flood = try send(100, round: 1)
        #expect(rig.waitForFinals(flood), "missing: \(rig.missingFinals(flood))")
        try rig.expectQuiet()
        // A result can reach the collector before its worker counts the acknowledgement.
        _ = PipelineRig.wait(timeoutMs: 10_000) { registry.total("provisioner_requests_total", matching: ["program": "unknown"]) >= 202 }
        let body = registry.renderPrometheus()
        #expect(!body.contains("nope-") && !body.contains("junk-"), "a program name from a message became a label")
        #expect(registry.total("provisioner_requests_total", matching: ["program": "unknown"]) == 202)
        // The worker exports its guards' evictions (none here: nothing was full).
        #expect(body.contains("# TYPE provisioner_nonce_guard_evictions_total counter\nprovisioner_nonce_guard_evictions_total 0\n"))
        #expect(body.contains("# TYPE provisioner_duplicate_filter_evictions_total counter\nprovisioner_duplicate_filter_evictions_total 0\n"))
        let after = MetricBoundsTests.series(body)
        #expect(after == before, "series added: \(Set(after).subtracting(before).sorted().prefix(5))")
    }
}

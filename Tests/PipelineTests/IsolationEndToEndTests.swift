import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Simulator
import TestSupport
import Testing

/// Isolation end to end: bulkheads, circuit breakers and upstream rate limits on the embedded
/// broker and simulator with two programs on two issuers.
@Suite("Isolation between programs and issuers", .serialized, .timeLimit(.minutes(10)))
struct IsolationEndToEndTests {
    /// A stack with one worker whose configuration `adjust` edits, a collector and a producer.
    struct Rig {
        let stack: EmbeddedStack
        let worker: Worker
        let metrics: MetricsRegistry
        let collector: ResultCollector
        let producer: KafkaProducer
        let factory: RequestFactory
        /// When the warm-up's requests were all answered: every call they made took its rate-limit
        /// token before this.
        let warmedUpAtMs: Int64

        init(profile: SimulatorProfile, adjust: (inout WorkerConfiguration) -> Void) throws {
            stack = try EmbeddedStack(partitions: 3, profile: profile)
            metrics = MetricsRegistry()
            let configuration = try stack.configuration(groupID: "isolation-\(UUID().uuidString)", adjust: adjust)
            worker = try stack.startWorker(configuration, logger: Logger(label: "worker", minimumLevel: .error, handler: CapturingLogHandler()),
                                           metrics: metrics)
            collector = try ResultCollector(properties: stack.consumerProperties, topics: stack.topics, partitions: stack.partitions)
            producer = try KafkaProducer(configuration: stack.producerProperties)
            factory = try RequestFactory(devices: 2)
            #expect(stack.waitForGroup())
            try EmbeddedStack.warmUp(partitions: stack.partitions, topic: stack.topics.requests, factory: factory, producer: producer,
                                     collector: collector)
            warmedUpAtMs = Timestamps.nowMs()
        }

        func send(_ request: GeneratedRequest) throws {
            try producer.send(KafkaOutgoingMessage(topic: stack.topics.requests, key: request.key, value: request.value)) { _ in }
        }

        func stop() {
            producer.close(timeoutMs: 5_000)
            collector.stop()
            stack.stop()
        }
    }

    static func profile(dcs rule: LoadRule) -> SimulatorProfile {
        var profile = SimulatorProfile()
        profile.issuerRules[.dcs] = rule
        return profile
    }

    @Test("a hanging issuer holds only its own bulkhead: the other program keeps its latency and every deadline")
    func hangingIssuerDoesNotStarveOthers() throws {
        var hang = LoadRule()
        hang.hangRate = 1
        let rig = try Rig(profile: Self.profile(dcs: hang)) { configuration in
            configuration.scheduler.globalLimit = 32
            configuration.scheduler.programLimits["demo-dcs"] = 8
            configuration.programs["demo-dcs"]?.timeoutMs = 1_500
        }
        defer { rig.stop() }
        var healthy: [GeneratedRequest] = []
        var hanging: [GeneratedRequest] = []
        // More hanging calls than the global limit: without the bulkhead they would take every slot.
        for index in 0..<48 {
            let request = try rig.factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: "pm_hang_\(index)", opcRequested: false)
            hanging.append(request)
            try rig.send(request)
        }
        for index in 0..<60 {
            let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_ok_\(index)")
            healthy.append(request)
            try rig.send(request)
            // Pacing, not waiting for anything: the healthy requests are offered at about 50/s,
            // spread over the hanging calls' 1.5 s timeout instead of arriving as one batch.
            usleep(20_000)
        }
        let answered = rig.collector.wait(timeoutMs: 60_000) { snapshot in healthy.allSatisfy { snapshot.final($0.requestID) != nil } }
        #expect(answered)
        let snapshot = rig.collector.snapshot
        var latencies: [Int64] = []
        for request in healthy {
            let received = try #require(snapshot.results[request.requestID]?.first)
            #expect(received.result.status == .provisioned)
            let timing = received.result.timing
            // In Kafka (read by the collector) before deadline − margin, not only stamped before it.
            #expect(received.consumedAtMs <= (timing.deadlineMs ?? 0) - 1_000, "healthy results are in Kafka in time")
            latencies.append(try #require(timing.publishedAtMs) - (try #require(timing.receivedAtMs)))
        }
        #expect(rig.metrics.total("provisioner_deadline_misses_total") == 0, "results acknowledged after their publish-by time")
        // Without the bulkhead the first healthy requests would wait for a global slot held by a
        // hanging call, 1.5 s or more (the call timeout; a busy machine only makes it later). The
        // p99 (the second slowest of 60) must stay under that, with 1.4 s of room for a busy machine.
        latencies.sort()
        #expect(latencies[latencies.count * 99 / 100 - 1] < 1_400, "healthy program's p99 receive-to-publish stays below the hanging issuer's timeout: \(latencies.suffix(5))")
        let dcsDone = rig.collector.wait(timeoutMs: 60_000) { snapshot in hanging.allSatisfy { snapshot.results[$0.requestID] != nil } }
        #expect(dcsDone, "every request of the hanging issuer is answered too")
        // The bulkhead, from the worker's own audit: a call holds its slot from before its start is
        // stamped until after its answer, which came no earlier than the start plus the issuer time
        // the worker measured (`latency_ms` of issuer_timed_out). Those intervals lie inside the real
        // ones, so at no call's start may more than 8 of them be open. Without the bulkhead, 32
        // would be. (Some requests wait for a slot past their deadline, or meet an open breaker, and
        // are answered without a call.)
        let hangingIDs = Set(hanging.map(\.requestID))
        let afterDCS = rig.collector.snapshot
        var calls: [(start: Int64, end: Int64)] = []
        for id in hangingIDs {
            guard let start = afterDCS.audit.first(where: { $0.requestID == id && $0.stage == .issuerCallStarted })?.atMs else { continue }
            let ended = afterDCS.audit.first { $0.requestID == id && ($0.stage == .issuerTimedOut || $0.stage == .issuerResponded) }
            calls.append((start, start + max(0, (ended?.latencyMs ?? 0) - 1)))
        }
        #expect(calls.count > 8, "only \(calls.count) DCS calls started: the bulkhead was not tested")
        let busiest = calls.map { call in calls.filter { $0.start <= call.start && call.start < $0.end }.count }.max() ?? 0
        #expect(busiest <= 8, "\(busiest) DCS calls in flight at once with a bulkhead of 8")
    }

    @Test("the breaker opens on failures, refuses without calling, half-opens and closes when the issuer recovers")
    func breakerLifecycle() throws {
        var down = LoadRule()
        down.unavailableRate = 1
        let rig = try Rig(profile: Self.profile(dcs: down)) { configuration in
            var breaker = CircuitBreaker.Settings()
            breaker.windowSeconds = 10
            breaker.minimumCalls = 4
            breaker.failureRateThreshold = 0.5
            breaker.openDurationMs = 1_500
            breaker.halfOpenProbes = 2
            configuration.scheduler.defaultBreaker = breaker
        }
        defer { rig.stop() }
        // Failures open the breaker.
        var failing: [GeneratedRequest] = []
        for index in 0..<4 {
            let request = try rig.factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: "pm_down_\(index)", opcRequested: false)
            failing.append(request)
            try rig.send(request)
        }
        #expect(rig.collector.wait(timeoutMs: 30_000) { snapshot in failing.allSatisfy { snapshot.final($0.requestID) != nil } })
        for request in failing {
            #expect(rig.collector.snapshot.final(request.requestID)?.code == .issuerUnavailable)
        }
        #expect(rig.collector.wait(timeoutMs: 10_000) { $0.audit.contains { $0.stage == .breakerChanged && $0.issuer == .dcs } })
        // While open: refused at once, the issuer is not called.
        let callsBefore = rig.stack.simulator.calls.filter { $0.issuer == "dcs" }.reduce(0) { $0 + $1.count }
        let refused = try rig.factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: "pm_refused", opcRequested: false)
        try rig.send(refused)
        #expect(rig.collector.wait(timeoutMs: 10_000) { $0.final(refused.requestID) != nil })
        let refusal = try #require(rig.collector.snapshot.final(refused.requestID))
        #expect(refusal.status == .failed && refusal.code == .issuerUnavailable && refusal.nextAction == .surfaceError)
        #expect(refusal.message.contains("circuit breaker"))
        #expect(rig.stack.simulator.calls.filter { $0.issuer == "dcs" }.reduce(0) { $0 + $1.count } == callsBefore, "no call while open")
        // The issuer recovers; after the open period probes pass and the breaker closes. The open
        // period runs from the opening, which the worker stamped on its audit event after the
        // breaker took its own time: once the clock is past that stamp plus the open period, the
        // next call is a probe.
        rig.stack.simulator.replaceProfile(SimulatorProfile())
        let opened = try #require(rig.collector.snapshot.audit.last {
            $0.stage == .breakerChanged && $0.issuer == .dcs && ($0.reason?.text ?? "").contains("opened")
        })
        let halfOpensAtMs = opened.atMs + 1_500
        #expect(PipelineRig.wait(timeoutMs: 10_000) { Timestamps.nowMs() > halfOpensAtMs }, "the open period did not end by the clock")
        var recovered: [GeneratedRequest] = []
        for index in 0..<3 {
            let request = try rig.factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: "pm_back_\(index)", opcRequested: false)
            recovered.append(request)
            try rig.send(request)
            #expect(rig.collector.wait(timeoutMs: 10_000) { $0.final(request.requestID) != nil })
        }
        for request in recovered {
            #expect(rig.collector.snapshot.final(request.requestID)?.status == .provisioned)
        }
        let states = rig.collector.snapshot.audit.filter { $0.stage == .breakerChanged }.map { $0.reason?.text ?? "" }
        #expect(states.count >= 3, "\(states)")
        #expect(states.first?.contains("opened") == true)
        #expect(states.contains { $0.contains("half-open") })
        #expect(states.last?.contains("closed") == true)
        #expect(rig.metrics.total("provisioner_breaker_transitions_total") >= 3)
    }

    @Test("a 429 whose Retry-After fits the deadline is absorbed; one that does not is answered rate_limited at once")
    func retryAfterWithinTheDeadline() throws {
        var limited = LoadRule()
        limited.rateLimitedRate = 1
        limited.retryAfterSeconds = 1
        var profile = SimulatorProfile()
        profile.issuerRules[.imprint] = limited
        let rig = try Rig(profile: SimulatorProfile()) { _ in }
        defer { rig.stop() }
        rig.stack.simulator.replaceProfile(profile)
        // Room for the wait: the issuer recovers while the worker waits Retry-After.
        let patient = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_patient")
        try rig.send(patient)
        #expect(rig.collector.wait(timeoutMs: 5_000) { _ in
            rig.stack.simulator.calls.contains { $0.cardID == "pm_patient" }
        })
        rig.stack.simulator.replaceProfile(SimulatorProfile())
        #expect(rig.collector.wait(timeoutMs: 20_000) { $0.final(patient.requestID) != nil })
        #expect(rig.collector.snapshot.final(patient.requestID)?.status == .provisioned)
        // Absorbed, not avoided: the first call was answered 429 (the profile said so for every call)
        // and the worker called again after Retry-After.
        let patientCalls = rig.stack.simulator.calls.filter { $0.cardID == "pm_patient" }.reduce(0) { $0 + $1.count }
        #expect(patientCalls == 2, "a 429 then the retry that succeeded; the simulator saw \(patientCalls) call(s)")
        #expect(rig.collector.snapshot.results[patient.requestID]?.count == 1, "the 429 was absorbed: no interim result")
        // No room: an Apple Pay request whose deadline is closer than Retry-After + the minimum budget.
        rig.stack.simulator.replaceProfile(profile)
        let hurried = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: "pm_hurried",
                                                deadlineMs: Timestamps.nowMs() + 2_500)
        let sentAt = Timestamps.nowMs()
        try rig.send(hurried)
        #expect(rig.collector.wait(timeoutMs: 10_000) { $0.final(hurried.requestID) != nil })
        let received = try #require(rig.collector.snapshot.results[hurried.requestID]?.first)
        #expect(received.result.status == .failed && received.result.code == .rateLimited)
        // Not waited out: one call, no retry, and the worker's own receive-to-publish time is below
        // the 1 s Retry-After (inside the worker, so producer and consumer lag do not count).
        #expect(rig.stack.simulator.calls.filter { $0.cardID == "pm_hurried" }.reduce(0) { $0 + $1.count } == 1)
        let hurriedTiming = received.result.timing
        #expect((hurriedTiming.publishedAtMs ?? .max) - (hurriedTiming.receivedAtMs ?? 0) < 1_000,
                "answered without waiting out the Retry-After (sent at \(sentAt), in Kafka \(received.consumedAtMs - sentAt) ms later)")
    }

    @Test("the program's token bucket spaces calls within their deadlines and refuses those it cannot fit")
    func tokenBucket() throws {
        let rig = try Rig(profile: SimulatorProfile()) { configuration in
            configuration.scheduler.rateLimits["demo-imprint"] = .init(perSecond: 4, burst: 2)
        }
        defer { rig.stop() }
        // The warm-up's calls used tokens. The bucket is full again (burst 2 at 4/s) 0.5 s after
        // its last token was taken, and the warm-up took its tokens before its answers arrived.
        let refilledAtMs = rig.warmedUpAtMs + 1_000 * 2 / 4
        #expect(PipelineRig.wait(timeoutMs: 10_000) { Timestamps.nowMs() >= refilledAtMs }, "the bucket's refill time did not pass by the clock")
        var patient: [GeneratedRequest] = []
        for index in 0..<4 {
            let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_bucket_\(index)")
            patient.append(request)
            try rig.send(request)
        }
        var hurried: [GeneratedRequest] = []
        for index in 0..<6 {
            let request = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: "pm_rush_\(index)",
                                                    deadlineMs: Timestamps.nowMs() + 2_000)
            hurried.append(request)
            try rig.send(request)
        }
        let all = patient + hurried
        #expect(rig.collector.wait(timeoutMs: 30_000) { snapshot in all.allSatisfy { snapshot.final($0.requestID) != nil } })
        let snapshot = rig.collector.snapshot
        for request in patient { #expect(snapshot.final(request.requestID)?.status == .provisioned) }
        let limited = hurried.filter { snapshot.final($0.requestID)?.code == .rateLimited }
        #expect(!limited.isEmpty, "more calls than the bucket allows before their deadline are refused rate_limited")
        #expect(rig.metrics.total("provisioner_refusals_total", matching: ["reason": "rate_limited"]) == Double(limited.count))
        for request in all {
            let received = try #require(snapshot.results[request.requestID]?.first { $0.result.isFinal })
            #expect(received.consumedAtMs <= (received.result.timing.deadlineMs ?? 0) - 1_000, "every answer in Kafka inside the window")
        }
        #expect(rig.metrics.total("provisioner_deadline_misses_total") == 0, "results acknowledged after their publish-by time")
        // The spacing, from the worker's own audit of when each call started: with 4 tokens a
        // second and a burst of 2, any n consecutive starts span at least (n − 2) / 4 s (a busy
        // machine only spreads them further; 50 ms covers the stamp being taken after the token).
        let ids = Set(all.map(\.requestID))
        let starts = snapshot.audit.filter { $0.stage == .issuerCallStarted && ids.contains($0.requestID ?? "") }.map(\.atMs).sorted()
        #expect(starts.count == patient.count + hurried.count - limited.count, "\(starts.count) calls started; \(limited.count) refused")
        var crowded: [String] = []
        for first in starts.indices {
            for last in starts.indices where last > first {
                let allowed = 2 + 4 * Double(starts[last] - starts[first] + 50) / 1_000
                if Double(last - first + 1) > allowed { crowded.append("\(last - first + 1) calls in \(starts[last] - starts[first]) ms") }
            }
        }
        #expect(crowded.isEmpty, "calls closer together than the bucket allows: \(crowded.prefix(5))")
    }
}

import Kafka
@testable import Pipeline
import Testing

/// `ConsumerErrorWatch`: which poll errors retrying will not heal, reported once and fatal after
/// the bound, with time passed in.
@Suite("Consumer errors judged over time")
struct ConsumerErrorWatchTests {
    private static func error(_ code: KafkaError.Code, _ message: String = "Broker: refused") -> KafkaError {
        KafkaError(code: code, message: message)
    }

    @Test("retriable errors stay warnings, however long they go on")
    func retriableErrorsStayWarnings() {
        var watch = ConsumerErrorWatch(sessionTimeoutMs: 45_000, groupID: "g")
        for (index, code) in [KafkaError.Code.transport, .allBrokersDown, .coordinatorNotAvailable, .rebalanceInProgress, .timedOut].enumerated() {
            #expect(watch.observe(Self.error(code), nowMs: Int64(index) * 60_000) == .retry)
        }
        #expect(watch.failure == nil && !watch.isFatal)
    }

    @Test("a refused session timeout: reported at once with the fix, then quiet, then fatal after the bound (once)")
    func sessionTimeoutBelowTheMinimum() throws {
        var watch = ConsumerErrorWatch(sessionTimeoutMs: 4_500, groupID: "g", exitAfterMs: 30_000)
        let verdict = watch.observe(Self.error(.invalidSessionTimeout), nowMs: 1_000)
        guard case .unhealthy(let reason) = verdict else { Issue.record("got \(verdict)"); return }
        #expect(reason.hasPrefix("session.timeout.ms 4500 is below the broker's group.min.session.timeout.ms"))
        #expect(reason.contains("raise kafka_consumer.session.timeout.ms"))
        #expect(watch.observe(Self.error(.invalidSessionTimeout), nowMs: 3_000) == .reported)
        #expect(watch.observe(Self.error(.invalidSessionTimeout), nowMs: 30_999) == .reported)
        // A retriable error meanwhile is still a warning of its own.
        #expect(watch.observe(Self.error(.transport), nowMs: 20_000) == .retry)
        #expect(watch.observe(Self.error(.invalidSessionTimeout), nowMs: 31_000) == .fatal(reason: reason))
        #expect(watch.isFatal)
        #expect(watch.observe(Self.error(.invalidSessionTimeout), nowMs: 33_000) == .reported)
    }

    @Test("a session timeout above the maximum, or inside Kafka's defaults, names the other bound")
    func sessionTimeoutOtherBounds() {
        var above = ConsumerErrorWatch(sessionTimeoutMs: 2_000_000, groupID: "g")
        guard case .unhealthy(let high) = above.observe(Self.error(.invalidSessionTimeout), nowMs: 0) else { Issue.record("not reported"); return }
        #expect(high.contains("is above the broker's group.max.session.timeout.ms") && high.contains("lower"))
        var inside = ConsumerErrorWatch(consumerProperties: ["session.timeout.ms": "10000"], groupID: "g")
        guard case .unhealthy(let range) = inside.observe(Self.error(.invalidSessionTimeout), nowMs: 0) else { Issue.record("not reported"); return }
        #expect(range.hasPrefix("session.timeout.ms 10000 is outside the broker's"))
        let unset = ConsumerErrorWatch(consumerProperties: [:], groupID: "g")
        #expect(unset.sessionTimeoutMs == 45_000)
    }

    @Test("authorization failures are reported at once, naming the group or the topic error")
    func authorization() {
        var group = ConsumerErrorWatch(sessionTimeoutMs: 45_000, groupID: "provisioner")
        guard case .unhealthy(let groupReason) = group.observe(Self.error(.groupAuthorizationFailed), nowMs: 0) else {
            Issue.record("not reported"); return
        }
        #expect(groupReason.contains("grant this worker's principal READ on groups provisioner and provisioner.reconcile"))
        var topic = ConsumerErrorWatch(sessionTimeoutMs: 45_000, groupID: "provisioner")
        guard case .unhealthy(let topicReason) = topic.observe(Self.error(.topicAuthorizationFailed, "Subscribed topic not authorized"), nowMs: 0) else {
            Issue.record("not reported"); return
        }
        #expect(topicReason.contains("TOPIC_AUTHORIZATION_FAILED: Subscribed topic not authorized") && topicReason.contains("READ and DESCRIBE"))
    }

    @Test("an unknown topic is a warning until it has lasted the bound, reported at metadata-refresh pace; a longer gap starts over")
    func unknownTopicAfterABound() {
        var watch = ConsumerErrorWatch(sessionTimeoutMs: 45_000, groupID: "g", unknownTopicBoundMs: 30_000, unknownTopicGapMs: 600_000,
                                       exitAfterMs: 30_000)
        #expect(watch.observe(Self.error(.unknownTopicOrPartition), nowMs: 0) == .retry)
        #expect(watch.observe(Self.error(.unknownTopic), nowMs: 20_000) == .retry)
        // Quiet for longer than the gap: the topic was there meanwhile; a new episode.
        #expect(watch.observe(Self.error(.unknownTopic), nowMs: 700_000) == .retry)
        // Reported again at the next metadata refresh, 5 minutes on: still missing, past the bound.
        let verdict = watch.observe(Self.error(.unknownTopic, "Subscribed topic not available: provisioning.reconcile"), nowMs: 1_000_000)
        guard case .unhealthy(let reason) = verdict else { Issue.record("got \(verdict)"); return }
        #expect(reason.hasPrefix("a topic this worker reads has been unknown to the broker for 300 s"))
        #expect(reason.contains("provisioner topics apply"))
        #expect(watch.observe(Self.error(.unknownTopic), nowMs: 1_029_999) == .reported)
        #expect(watch.observe(Self.error(.unknownTopic), nowMs: 1_030_000) == .fatal(reason: reason))
    }

    @Test("a reported failure expires into fatal by time alone (once), for errors reported only at each metadata refresh")
    func expiresByTime() {
        var watch = ConsumerErrorWatch(sessionTimeoutMs: 45_000, groupID: "g", exitAfterMs: 30_000)
        #expect(watch.expire(nowMs: 100_000) == nil, "nothing reported, nothing expires")
        guard case .unhealthy(let reason) = watch.observe(Self.error(.topicAuthorizationFailed), nowMs: 1_000) else {
            Issue.record("not reported"); return
        }
        #expect(watch.expire(nowMs: 30_999) == nil)
        #expect(watch.expire(nowMs: 31_000) == .fatal(reason: reason))
        #expect(watch.expire(nowMs: 90_000) == nil, "fatal is given once")
        #expect(watch.observe(Self.error(.topicAuthorizationFailed), nowMs: 95_000) == .reported)
    }
}

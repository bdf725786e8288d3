import Kafka

/// Judges a consumer group's poll errors over time (time passed in): most heal by retrying, which
/// librdkafka does by itself, but some never will: the broker refusing the member's
/// `session.timeout.ms` (INVALID_SESSION_TIMEOUT), the group or a topic not authorized, a topic
/// still unknown after `unknownTopicBoundMs`. Such an error is reported once, with what to change
/// (`unhealthy`: `/readyz` fails), and if errors keep coming `exitAfterMs` after that the worker is
/// to stop and exit non-zero (`fatal`), instead of logging the same warning every few seconds.
struct ConsumerErrorWatch: Sendable {
    /// What to do with one poll error.
    enum Verdict: Equatable, Sendable {
        /// Retriable, or not judged yet: log it as a warning, as any consumer error.
        case retry
        /// Part of a failure already reported: log nothing more.
        case reported
        /// Will not heal by retrying: fail readiness with `reason` and log it once as an error.
        case unhealthy(reason: String)
        /// Still failing `exitAfterMs` after it was reported: stop the worker, exit non-zero.
        case fatal(reason: String)
    }

    /// The member's `session.timeout.ms` (librdkafka's default 45,000 when not configured).
    let sessionTimeoutMs: Int
    /// The consumer group, named in an authorization failure's fix.
    let groupID: String
    /// How long a topic may stay unknown (created late, a leader moving) before that is a failure.
    let unknownTopicBoundMs: Int64
    /// The longest quiet gap that still continues an unknown-topic episode: librdkafka reports a
    /// missing subscribed topic again at each metadata refresh (`topic.metadata.refresh.interval.ms`,
    /// 5 minutes by default), so a longer gap means the topic existed meanwhile.
    let unknownTopicGapMs: Int64
    /// How long after a failure is reported the worker keeps running (readiness failed) before it exits.
    let exitAfterMs: Int64

    /// The reported failure and when it was reported.
    private(set) var failure: (reason: String, atMs: Int64)?
    /// Whether `fatal` was given (once).
    private(set) var isFatal = false
    private var unknownTopic: (sinceMs: Int64, lastMs: Int64)?

    /// A watch for a member of `groupID` with `sessionTimeoutMs`.
    init(sessionTimeoutMs: Int, groupID: String, unknownTopicBoundMs: Int64 = 30_000, unknownTopicGapMs: Int64 = 10 * 60_000,
         exitAfterMs: Int64 = 30_000) {
        self.sessionTimeoutMs = sessionTimeoutMs
        self.groupID = groupID
        self.unknownTopicBoundMs = unknownTopicBoundMs
        self.unknownTopicGapMs = unknownTopicGapMs
        self.exitAfterMs = exitAfterMs
    }

    /// A watch for the consumer `properties` describe (`session.timeout.ms`, `group.id`), failing
    /// for good `exitAfterMs` after a report.
    init(consumerProperties properties: [String: String], groupID: String, exitAfterMs: Int64 = 30_000) {
        self.init(sessionTimeoutMs: properties["session.timeout.ms"].flatMap { Int($0) } ?? 45_000, groupID: groupID,
                  exitAfterMs: exitAfterMs)
    }

    /// Judges `error`, seen at `nowMs`.
    mutating func observe(_ error: KafkaError, nowMs: Int64) -> Verdict {
        if failure != nil {
            if let fatal = expire(nowMs: nowMs) { return fatal }
            return reason(for: error, nowMs: nowMs) == nil ? .retry : .reported
        }
        guard let reason = reason(for: error, nowMs: nowMs) else { return .retry }
        failure = (reason, nowMs)
        return .unhealthy(reason: reason)
    }

    /// `fatal` once the reported failure is `exitAfterMs` old (once; nil before, after, or with no
    /// failure): asked by a timer too, since some errors are reported only at each metadata refresh.
    mutating func expire(nowMs: Int64) -> Verdict? {
        guard let failure, !isFatal, nowMs - failure.atMs >= exitAfterMs else { return nil }
        isFatal = true
        return .fatal(reason: failure.reason)
    }

    /// Why `error` will not heal by retrying, with the fix; nil when it may.
    private mutating func reason(for error: KafkaError, nowMs: Int64) -> String? {
        switch error.code {
        case .invalidSessionTimeout:
            return sessionTimeoutReason
        case .groupAuthorizationFailed:
            return """
                the broker refused consumer group \(groupID) (GROUP_AUTHORIZATION_FAILED): grant this worker's principal READ on \
                groups \(groupID) and \(groupID).reconcile
                """
        case .topicAuthorizationFailed:
            return """
                the broker refused a topic this worker reads (TOPIC_AUTHORIZATION_FAILED: \(error.message)): grant this worker's \
                principal READ and DESCRIBE on the requests, reconcile and markers topics (Deploy/README.md)
                """
        case .unknownTopic, .unknownTopicOrPartition:
            // A new episode when the last report is older than the gap (the topic existed meanwhile).
            if let episode = unknownTopic, nowMs - episode.lastMs <= unknownTopicGapMs {
                unknownTopic = (episode.sinceMs, nowMs)
            } else {
                unknownTopic = (nowMs, nowMs)
            }
            guard let episode = unknownTopic, nowMs - episode.sinceMs >= unknownTopicBoundMs else { return nil }
            return """
                a topic this worker reads has been unknown to the broker for \((nowMs - episode.sinceMs) / 1000) s (\(error.message)): \
                create the topics ('provisioner topics apply') or correct topics.* in the configuration
                """
        default:
            return nil
        }
    }

    /// The fix for a refused `session.timeout.ms`, from where it lies against Apache Kafka's defaults.
    private var sessionTimeoutReason: String {
        let setting = "kafka_consumer.session.timeout.ms (PROVISIONER_KAFKA_CONSUMER__SESSION_TIMEOUT_MS)"
        if sessionTimeoutMs < 6_000 {
            return """
                session.timeout.ms \(sessionTimeoutMs) is below the broker's group.min.session.timeout.ms (6000 unless the broker \
                sets another; INVALID_SESSION_TIMEOUT): raise \(setting) to at least that
                """
        }
        if sessionTimeoutMs > 1_800_000 {
            return """
                session.timeout.ms \(sessionTimeoutMs) is above the broker's group.max.session.timeout.ms (1800000 unless the broker \
                sets another; INVALID_SESSION_TIMEOUT): lower \(setting) to at most that
                """
        }
        return """
            session.timeout.ms \(sessionTimeoutMs) is outside the broker's group.min.session.timeout.ms to \
            group.max.session.timeout.ms range (INVALID_SESSION_TIMEOUT): set \(setting) within it
            """
    }
}

import Kafka

/// The outcome of applying a topic plan: one entry per step, and the request error that stopped
/// it early, if any.
public struct TopicApplyReport: Sendable {
    /// Every step of the plan with its result, in plan order.
    public var outcomes: [TopicChangeOutcome]
    /// The admin request that failed as a whole (no answer, not authorised, ...); later steps were
    /// not attempted.
    public var stoppedBy: KafkaError?
    /// The admin request that `stoppedBy` belongs to (`CreateTopics`, `CreatePartitions`, `AlterConfigs`).
    public var stoppedRequest: String?

    /// Creates a report.
    public init(outcomes: [TopicChangeOutcome], stoppedBy: KafkaError? = nil, stoppedRequest: String? = nil) {
        self.outcomes = outcomes
        self.stoppedBy = stoppedBy
        self.stoppedRequest = stoppedRequest
    }

    /// Steps the cluster accepted.
    public var appliedCount: Int { outcomes.filter { $0.result == .applied }.count }

    /// True when every step was applied.
    public var isComplete: Bool { stoppedBy == nil && appliedCount == outcomes.count }
}

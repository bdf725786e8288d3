/// What became of one step of an applied topic plan.
public struct TopicChangeOutcome: Sendable {
    /// The step's result.
    public enum Result: Sendable, Hashable {
        /// The cluster accepted it.
        case applied
        /// The cluster refused it; the reason says why.
        case failed(String)
        /// Sent, but the request got no answer in time: the cluster may or may not have applied it
        /// (run the plan again to see).
        case unanswered
        /// Not tried, because an earlier request got no answer or failed as a whole.
        case notAttempted
    }

    /// The step.
    public var change: TopicChange
    /// What happened.
    public var result: Result
}

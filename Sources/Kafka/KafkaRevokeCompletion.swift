/// What a rebalance listener says when partitions are revoked: give them up when the callback
/// returns, or keep them (still assigned, the group's rebalance waiting) until the application
/// calls `KafkaConsumer.completeRevoke` from its poll thread.
///
/// Deferring lets the poll thread go on serving the partitions the consumer keeps while the
/// revoked ones drain: librdkafka stays in its "wait for the unassign call" state, heartbeats go
/// on, and the group's next generation forms once the call is made (within the group's rebalance
/// timeout, `max.poll.interval.ms`). Inside `close` a deferral is not possible: the partitions are
/// given up when the callback returns, whatever it says.
public enum KafkaRevokeCompletion: Sendable, Equatable {
    /// Unassign when the callback returns.
    case now
    /// Keep the partitions until `completeRevoke` is called.
    case deferred
}

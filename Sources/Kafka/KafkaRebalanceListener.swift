/// Hears about partitions a group consumer gains and gives up.
///
/// Every method runs on the thread that called `KafkaConsumer.poll` (or `close`), inside that call,
/// so the listener may use the consumer synchronously (commit, seek, pause; `close` takes effect
/// when the poll returns). Empty partition lists are not reported.
public protocol KafkaRebalanceListener: AnyObject, Sendable {
    /// The partitions were added to this consumer's assignment (already assigned: seek or pause here).
    func partitionsAssigned(_ partitions: [TopicPartition], by consumer: KafkaConsumer)
    /// Called before the partitions are released: the place to finish work and commit. `.deferred`
    /// keeps them assigned until `KafkaConsumer.completeRevoke` (see `KafkaRevokeCompletion`).
    func partitionsRevoked(_ partitions: [TopicPartition], by consumer: KafkaConsumer) -> KafkaRevokeCompletion
    /// Partitions lost without a clean revoke: commit nothing.
    func partitionsLost(_ partitions: [TopicPartition], by consumer: KafkaConsumer)
}

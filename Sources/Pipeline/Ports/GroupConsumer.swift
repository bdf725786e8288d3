import Kafka

/// A consumer-group member as the worker's consumer loops use it (the Kafka "consume, commit,
/// rebalance" port of the deterministic simulation): `KafkaConsumer` in production. Rebalances
/// reach the loop's `RebalanceRelay` inside `poll`, on the loop's thread.
package protocol GroupConsumer: AnyObject, Sendable {
    /// Joins the group and consumes `topics`.
    func subscribe(_ topics: [String]) throws(KafkaError)
    /// Returns up to `maxMessages` records and errors, waiting up to `timeoutMs` for the first.
    func poll(maxMessages: Int, timeoutMs: Int32) -> [Result<KafkaMessage, KafkaError>]
    /// Stops fetching from `partitions`.
    func pause(_ partitions: [TopicPartition])
    /// Fetches from `partitions` again.
    func resume(_ partitions: [TopicPartition])
    /// Moves `partition`'s fetch position to `offset`.
    func seek(_ partition: TopicPartition, to offset: Int64, timeoutMs: Int32) throws(KafkaError)
    /// Gives `partition` up and takes it again at `offset` in this member only, replacing its
    /// fetcher (`KafkaConsumer.refetch`); false when the rebalance protocol does not allow it.
    func refetch(_ partition: TopicPartition, from offset: Int64) throws(KafkaError) -> Bool
    /// Sends a commit of `offsets` (with their metadata) and returns at once: the coordinator's
    /// answer reaches the commit handler inside a later `poll`.
    func commitAsynchronously(_ offsets: [TopicPartitionOffset]) throws(KafkaError)
    /// Commits `offsets` (with their metadata) and waits at most `timeoutMs` for the coordinator's
    /// answer: `.timedOut` without one in time (the commit may still land later).
    func commit(_ offsets: [TopicPartitionOffset], timeoutMs: Int32) throws(KafkaError)
    /// The group's committed offsets (and metadata) of `partitions`.
    func committed(_ partitions: [TopicPartition], timeoutMs: Int32) throws(KafkaError) -> [TopicPartitionOffset]
    /// `partition`'s low and high watermarks.
    func watermarks(_ partition: TopicPartition, timeoutMs: Int32) throws(KafkaError) -> (low: Int64, high: Int64)
    /// The number of partitions of `topic`.
    func partitionCount(topic: String, timeoutMs: Int32) throws(KafkaError) -> Int
    /// The group generation this member is in (read in an assignment callback: the one that
    /// rebalance formed), nil outside a group or when unknown.
    var groupGeneration: Int32? { get }
    /// Gives up the partitions of the revoke the loop deferred (`KafkaRevokeCompletion`).
    func completeRevoke()
    /// Leaves the group (a revoke first, completed at once) and releases the client.
    func close()
}

extension KafkaConsumer: GroupConsumer {
    /// `commit(_:synchronously: false)`.
    package func commitAsynchronously(_ offsets: [TopicPartitionOffset]) throws(KafkaError) {
        try commit(offsets, synchronously: false)
    }
}

import Kafka

/// What the worker's outputs are produced through (the Kafka "produce with acknowledgement" port
/// of the deterministic simulation): `KafkaProducer` in production.
package protocol RecordProducer: AnyObject, Sendable {
    /// Enqueues `message`; `onDelivery` runs once with where it was written or why it failed.
    /// Throws at once when it cannot be enqueued (`KafkaProducer.send(_:onDelivery:)`).
    func send(_ message: KafkaOutgoingMessage,
              onDelivery: @escaping @Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void) throws(KafkaError)
    /// Messages produced and not yet acknowledged.
    var outstandingCount: Int { get }
    /// The number of partitions of `topic`, from cluster metadata.
    func partitionCount(topic: String, timeoutMs: Int32) throws(KafkaError) -> Int
    /// Every topic the cluster lists, with its partition count (nil for one listed with an error).
    func partitionCounts(timeoutMs: Int32) throws(KafkaError) -> [String: Int?]
    /// Waits up to `timeoutMs` for every outstanding message; whether none is left.
    func flush(timeoutMs: Int32) -> Bool
    /// Flushes for up to `timeoutMs`, then releases the producer.
    func close(timeoutMs: Int32)
}

extension KafkaProducer: RecordProducer {}

import Contract
import Kafka

/// Reads one reply partition from a point in time to its current end, for the answers to one
/// request (blocking: run it on a thread of its own).
enum ReplyLookup {
    /// What an answer must match: the request (program, request id), its wallet, the correlation
    /// id it was sent with, and the kind the client sends (`provision`).
    struct Awaited: Sendable {
        var identity: RequestIdentity
        var wallet: Wallet
        var correlationID: [UInt8]

        /// Whether the record with correlation header `correlation` and decoded `result` answers it.
        func isAnswered(by result: ProvisioningResult, correlation: [UInt8]?) -> Bool {
            correlation == correlationID && result.identity == identity && result.wallet == wallet && result.kind == .provision
        }
    }

    /// The final answer to `awaited` (else the last non-final one) among the records of
    /// `partition` written at or after `sinceMs`, up to the high watermark when the lookup began.
    static func find(_ awaited: Awaited, in partition: TopicPartition, sinceMs: Int64,
                     properties: [String: String]) -> Result<ProvisioningResult?, ProvisionerClientError> {
        do throws(KafkaError) {
            let consumer = try KafkaConsumer(configuration: properties, rebalanceListener: nil)
            defer { consumer.close() }
            let (low, end) = try consumer.watermarks(partition, timeoutMs: 10_000)
            // When the broker names no offset for the time, read from the first record kept (and
            // skip older ones by timestamp): a broker that cannot look up by time then still finds it.
            let start = try consumer.offset(partition, atOrAfterTimestampMs: sinceMs, timeoutMs: 10_000) ?? low
            guard start < end else { return .success(nil) }
            try consumer.assign([TopicPartitionOffset(partition, offset: start)])
            let key = Array(awaited.identity.requestID.utf8)
            var latest: ProvisioningResult?
            var next = start
            let deadline = ContinuousClock.now.advanced(by: .seconds(30))
            while next < end {
                guard ContinuousClock.now < deadline else {
                    return .failure(ProvisionerClientError(.kafka, "the reply partition could not be read to its end within 30 s"))
                }
                for item in consumer.poll(maxMessages: 512, timeoutMs: 100) {
                    guard case .success(let message) = item else { continue }
                    next = max(next, message.offset + 1)
                    guard message.key == key, (message.timestampMs ?? sinceMs) >= sinceMs, let result = try? ProvisioningResult.decode(message.value),
                          awaited.isAnswered(by: result, correlation: message.header(ReplyRoute.correlationHeader)) else { continue }
                    if result.isFinal { return .success(result) }
                    latest = result
                }
            }
            return .success(latest)
        } catch {
            return .failure(ProvisionerClientError(.kafka, "the reply partition could not be read: \(error.description)"))
        }
    }
}

import CRdKafka

extension KafkaError {
    /// Why the cluster (or the producer itself) refuses a record for good, as a bounded word for
    /// metrics and logs; nil when sending it again may succeed (or the error is fatal: the client
    /// itself is done, `isFatal`).
    public enum Refusal: String, Sendable, CaseIterable {
        /// Over the producer's `message.max.bytes` or the topic's `max.message.bytes`.
        case messageTooLarge = "message_too_large"
        /// The principal may not write the topic (or the cluster).
        case notAuthorized = "not_authorized"
        /// The broker refused the record or the request itself (invalid record, policy, message
        /// format, topic name, acknowledgement setting, a bad argument).
        case invalidRecord = "invalid_record"
    }

    /// The produce error's refusal, when the same record can never be written: the one place that
    /// tells a permanent refusal from a failure worth retrying. Whoever retries a produce until it
    /// is acknowledged asks this, and stops.
    public var refusal: Refusal? {
        guard !isFatal else { return nil }
        switch code {
        case .messageSizeTooLarge, Code(RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE):
            return .messageTooLarge
        case .topicAuthorizationFailed, .clusterAuthorizationFailed, Code(RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED):
            return .notAuthorized
        case .invalidRecord, .policyViolation, .invalidArgument, Code(RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION),
             Code(RD_KAFKA_RESP_ERR_INVALID_REQUIRED_ACKS), Code(RD_KAFKA_RESP_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT):
            return .invalidRecord
        default:
            return nil
        }
    }
}

import CRdKafka

/// A failure reported by librdkafka, by the cluster, or by this binding.
///
/// `code` is librdkafka's `rd_kafka_resp_err_t` value, so codes the binding does not name are still
/// distinguishable. `message` says what happened and, where there is something to do, what to do.
public struct KafkaError: Error, Sendable, CustomStringConvertible {
    /// The error code (`rd_kafka_resp_err_t`).
    public var code: Code
    /// What happened and what to do about it.
    public var message: String
    /// True when the same operation may succeed if tried again (a leader moved, a broker was down).
    public var isRetriable: Bool
    /// True when the client instance can no longer be used and must be recreated.
    public var isFatal: Bool

    /// Creates an error; `isRetriable` defaults to what the code usually means.
    public init(code: Code, message: String, isRetriable: Bool? = nil, isFatal: Bool = false) {
        self.code = code
        self.message = message
        self.isRetriable = isRetriable ?? code.isUsuallyRetriable
        self.isFatal = isFatal || code == .fatal
    }

    /// True when the error means this consumer no longer owns the partition (revoked, lost, or the
    /// group moved on to a newer generation): the work is owned elsewhere now, drop it.
    public var meansPartitionNotOwned: Bool {
        [Code.state, .illegalGeneration, .unknownMemberID, .rebalanceInProgress, .assignmentLost, .fencedInstanceID]
            .contains(code)
    }

    /// `CODE_NAME: message`.
    public var description: String {
        "\(code.name): \(message)"
    }

    /// An error built from a librdkafka code, with librdkafka's text and an optional prefix.
    static func fromLibrary(_ raw: rd_kafka_resp_err_t, context: String? = nil) -> KafkaError {
        let code = Code(raw)
        let text = code.libraryDescription
        return KafkaError(code: code, message: context.map { "\($0): \(text)" } ?? text)
    }

    /// An error built from an `rd_kafka_error_t`, which it destroys.
    static func consuming(_ error: OpaquePointer, context: String? = nil) -> KafkaError {
        defer { rd_kafka_error_destroy(error) }
        let code = Code(rawValue: rd_kafka_error_code(error).rawValue)
        let text = rd_kafka_error_string(error).map { KafkaSecretRedaction.redact(String(cString: $0)) } ?? code.libraryDescription
        return KafkaError(
            code: code,
            message: context.map { "\($0): \(text)" } ?? text,
            isRetriable: rd_kafka_error_is_retriable(error) != 0 || code.isUsuallyRetriable,
            isFatal: rd_kafka_error_is_fatal(error) != 0
        )
    }

    /// The error reported when a client is used after `close()`.
    static func closed(_ client: String) -> KafkaError {
        KafkaError(code: .destroyed, message: "the \(client) is closed; create a new one", isRetriable: false)
    }
}

/// Why a `ProvisionerClient` call failed (never quotes a secret, a payload or a raw card id).
public struct ProvisionerClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: String, Sendable {
        /// Kafka refused or failed (producing, assigning the reply partition, reading).
        case kafka
        /// The request could not be built (a value the contract refuses).
        case invalidRequest = "invalid_request"
        /// No answer arrived within the window.
        case noAnswer = "no_answer"
        /// A request with the same `request_id` is already awaited by this client.
        case alreadyAwaited = "already_awaited"
        /// A payload on the result could not be decrypted or read.
        case payload
        /// The client was closed.
        case closed
    }

    /// What kind of failure.
    public var code: Code
    /// One line for logs.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

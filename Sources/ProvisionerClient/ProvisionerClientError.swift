import Contract

/// Why a `ProvisionerClient` call failed (never quotes a secret, a payload or a raw card id), and
/// what the app should do next even so (`nextAction`).
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
    /// What the app should do: `check_wallet` when no answer came (the issuer may have added the
    /// card), the wallet's transient action when the request may not have been sent,
    /// `surface_error` for a request that cannot be built.
    public var nextAction: NextAction

    /// Creates an error; `nextAction` defaults by code (see `nextAction`, for `wallet`).
    public init(_ code: Code, _ message: String, wallet: Wallet = .googlePay) {
        self.code = code
        self.message = message
        nextAction = switch code {
        case .noAnswer: .checkWallet
        case .invalidRequest, .payload: .surfaceError
        case .alreadyAwaited: .none
        case .kafka, .closed: OutcomeTable.transientNextAction(kind: .provision, wallet: wallet)
        }
    }

    /// The same error with the next action for `wallet`.
    func `for`(_ wallet: Wallet) -> ProvisionerClientError {
        ProvisionerClientError(code, message, wallet: wallet)
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

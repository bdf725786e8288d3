/// A request that could be identified (its `request_id` was readable) but breaks the contract:
/// answer it with a `rejected` result.
public struct RequestRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request's id.
    public var requestID: String
    /// The program, when it was readable and well-formed.
    public var program: String?
    /// The wallet, when it was readable and known.
    public var wallet: Wallet?
    /// The kind, when it was readable and known.
    public var kind: RequestKind?
    /// `invalid_request`, or `wallet_unsupported` for an unknown wallet.
    public var code: ErrorCode
    /// The offending field path, e.g. `card.id` or `apple.certificates[1]`.
    public var field: String
    /// What is wrong and what to do; names the field, never quotes its value.
    public var message: String

    /// Creates a rejection.
    public init(requestID: String, program: String?, wallet: Wallet?, kind: RequestKind?, code: ErrorCode,
                field: String, message: String) {
        self.requestID = requestID
        self.program = program
        self.wallet = wallet
        self.kind = kind
        self.code = code
        self.field = field
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }
}

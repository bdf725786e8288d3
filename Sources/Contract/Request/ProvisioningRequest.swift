/// A decoded request from `provisioning.requests` (CONTRACT section 3, version 1).
///
/// Decoding checks JSON types and shapes; `RequestValidator` checks the rules of CONTRACT section 9.
public struct ProvisioningRequest: Sendable {
    /// Schema version; always 1 here.
    public var version: Int
    /// Unique per attempt: 1–64 of `[A-Za-z0-9._:-]`.
    public var requestID: String
    /// Selects the issuer, base URL and credentials from configuration.
    public var program: String
    /// Provision, payment or payment action.
    public var kind: RequestKind
    /// The target wallet.
    public var wallet: Wallet
    /// The card.
    public var card: CardReference
    /// PassKit values (Apple Pay provisioning).
    public var apple: ApplePassKitHandshake?
    /// Google callback values (Google wallets).
    public var google: GoogleWalletHandshake?
    /// The payment (kind `payment`).
    public var payment: PaymentInstruction?
    /// The payment action (kind `payment_action`).
    public var paymentAction: PaymentActionInstruction?
    /// When the wallet SDK handed the values over (epoch milliseconds).
    public var startedAtMs: Int64?
    /// The backend's deadline (epoch milliseconds).
    public var deadlineMs: Int64?
    /// The key the result payload is encrypted to.
    public var reply: ReplyKey?

    /// Creates a request.
    public init(version: Int = 1, requestID: String, program: String, kind: RequestKind = .provision, wallet: Wallet,
                card: CardReference, apple: ApplePassKitHandshake? = nil, google: GoogleWalletHandshake? = nil,
                payment: PaymentInstruction? = nil, paymentAction: PaymentActionInstruction? = nil,
                startedAtMs: Int64? = nil, deadlineMs: Int64? = nil, reply: ReplyKey? = nil) {
        self.version = version
        self.requestID = requestID
        self.program = program
        self.kind = kind
        self.wallet = wallet
        self.card = card
        self.apple = apple
        self.google = google
        self.payment = payment
        self.paymentAction = paymentAction
        self.startedAtMs = startedAtMs
        self.deadlineMs = deadlineMs
        self.reply = reply
    }
}

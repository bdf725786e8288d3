import Contract

/// What reconciliation asks an issuer after an indeterminate call: was it applied?
public struct ReconcileQuery: Sendable, Hashable {
    /// The request whose call was indeterminate.
    public var requestID: String
    /// Provision or payment.
    public var kind: RequestKind
    /// The wallet the card was provisioned into.
    public var wallet: Wallet
    /// The issuer's card id.
    public var cardID: Sensitive
    /// SHA-256 hex of the Apple leaf certificate DER, or of the Google `device_id`; `nil` when
    /// unknown (then any device's token counts).
    public var deviceRef: String?
    /// The request window's start (epoch milliseconds): where the issuer names no handshake, tokens
    /// older than this (less a skew allowance) belong to an earlier attempt.
    public var windowStartMs: Int64
    /// The payment's transaction reference (Worldpay).
    public var transactionReference: String?
    /// The reference of the call's wallet handshake (`HandshakeReference`): an issuer whose state
    /// names the handshake behind each token tells this call's token from an earlier one's.
    public var handshakeRef: String?

    /// Creates a query.
    public init(requestID: String, kind: RequestKind, wallet: Wallet, cardID: Sensitive, deviceRef: String?,
                windowStartMs: Int64, transactionReference: String? = nil, handshakeRef: String? = nil) {
        self.requestID = requestID
        self.kind = kind
        self.wallet = wallet
        self.cardID = cardID
        self.deviceRef = deviceRef
        self.windowStartMs = windowStartMs
        self.transactionReference = transactionReference
        self.handshakeRef = handshakeRef
    }

    /// The query for `request` whose window started at `windowStartMs`.
    public init(request: ProvisioningRequest, windowStartMs: Int64) {
        self.init(requestID: request.requestID, kind: request.kind, wallet: request.wallet, cardID: request.card.id,
                  deviceRef: Self.deviceRef(for: request), windowStartMs: windowStartMs,
                  transactionReference: request.payment?.transactionReference ?? request.paymentAction?.transactionReference,
                  handshakeRef: HandshakeReference.of(request))
    }

    /// The device reference the issuer's state API reports: lowercase hex SHA-256 of the Apple leaf
    /// certificate's DER bytes, or of the Google `device_id`'s UTF-8 bytes; `nil` when the request
    /// has neither (or the leaf is not base64).
    public static func deviceRef(for request: ProvisioningRequest) -> String? {
        switch request.wallet {
        case .applePay:
            guard let leaf = request.apple?.certificates.first, let der = Crypto.base64Decode(leaf.revealed) else { return nil }
            return Crypto.hex(Crypto.sha256(der))
        case .googleWallet, .googlePay:
            guard let deviceID = request.google?.deviceID else { return nil }
            return Crypto.hex(Crypto.sha256(utf8: deviceID.revealed))
        }
    }
}

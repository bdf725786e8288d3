/// What an issuer said, transport failures included: the input of `OutcomeTable`.
public enum IssuerAnswer: Sendable, Hashable {
    /// A provisioning success whose payload passed `ProvisioningPayload.problem(...)`.
    case success(ProvisioningPayload)
    /// A Worldpay answer carrying an outcome (authorized, refused, sent for settlement, ...).
    case payment(PaymentResult)
    /// An error answer: HTTP status, the issuer's own code (Imprint `error.code`, DCS envelope `code`,
    /// Gnosis `code`, Worldpay `errorName`), and its free-text message. The message may echo
    /// identifiers, so it is `Sensitive`.
    case issuerError(httpStatus: Int, issuerCode: String?, message: Sensitive?)
    /// No HTTP answer.
    case transportFailure(TransportFailure)
    /// A success status whose body is unusable (missing or oversized fields); `reason` is our own text.
    case invalidSuccessResponse(reason: String)
}

import Contract

/// What an issuer's state says about an indeterminate call.
public enum ReconcileAnswer: Sendable, Hashable {
    /// It was applied (a matching wallet token exists); `detail` is our text and holds no secret.
    case applied(detail: String)
    /// It was not applied (no matching token; no payment with that reference).
    case notApplied
    /// This call made no token, but an earlier one put the card in that wallet on that device:
    /// the call itself was (or would have been) answered "already provisioned".
    case alreadyPresent(detail: String)
    /// A token exists that this call may have made, or another request's call with the same
    /// recurring handshake (Legacy Google Pay's stable wallet and device ids): the card is in that
    /// wallet on that device, but whose call made it cannot be learned. Answered `check_wallet`.
    case notAttributable(detail: String)
    /// The issuer has no state API (DCS, Gnosis Pay): the result tells the app to `check_wallet`.
    case noStateAPI
    /// The query itself failed or was unusable: ask again at the next reconciliation tier.
    case unknown(reason: String)
    /// A payment's current state: the last event and its links.
    case payment(PaymentResult)
}

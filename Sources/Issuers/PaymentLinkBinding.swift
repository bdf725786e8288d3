import Contract
import HTTP

/// The check that ties a payment action's link to the authorization the request names: before the
/// action is sent, Worldpay is asked for the payment with the request's `transaction_reference`
/// (the recovery query), and the link's token must be one of that payment's link tokens. A link
/// of another payment, or a reference Worldpay does not know, is refused without the action.
struct PaymentLinkBinding: Sendable {
    /// What the query says of the link.
    enum Verdict: Sendable, Equatable {
        /// The link belongs to the named authorization.
        case bound
        /// The link does not, or the authorization does not exist: refuse with this message.
        case refused(String)
        /// The query got no usable answer: nothing is known, the action was not sent.
        case unknown
    }

    /// `GET {base}/payments/events?transactionReference=R`, without timeout.
    let query: HTTPClientRequest
    /// The token of the link the action would follow.
    let linkToken: String?

    /// What `response` to the query says of the link.
    func verdict(for response: HTTPClientResponse) -> Verdict {
        if response.status == 404 {
            return .refused("Worldpay has no payment with payment_action.transaction_reference for this program; "
                + "name the authorization's own transaction_reference")
        }
        guard IssuerWire.isSuccess(response.status), let body = IssuerWire.json(response.body) else { return .unknown }
        let tokens = PaymentLinks(worldpayLinks: body["_links"]).tokens
        guard !tokens.isEmpty else { return .unknown }
        guard let linkToken, tokens.contains(linkToken) else {
            return .refused("payment_action.link is not a link of the payment payment_action.transaction_reference names; "
                + "send that authorization's own link, unchanged")
        }
        return .bound
    }
}

import Contract
import HTTP

/// Worldpay Apple Pay payments: `POST /cardPayments/customerInitiatedTransactions` with the wallet
/// token (`card/wallet+applepay`) → `authorized` (masked instrument and action links) or `refused`;
/// follow-ups (settle, partial settle, cancel) through the authorization's links; recovery query
/// `GET /payments/events?transactionReference=R`.
public struct WorldpayAdapter: IssuerAdapter {
    /// The endpoint the adapter was made for.
    public let endpoint: IssuerEndpoint

    /// Creates the adapter.
    public init(endpoint: IssuerEndpoint) {
        self.endpoint = endpoint
    }

    /// `kind: payment` → the customer-initiated transaction; `kind: payment_action` → the action
    /// through its link (`makeActionRequest`); provisioning is `kind_unsupported`.
    public func makeRequest(for request: ProvisioningRequest) throws(IssuerRequestError) -> HTTPClientRequest {
        switch request.kind {
        case .provision:
            throw IssuerRequestError(code: .kindUnsupported, message: "Worldpay takes payments only; provision cards through an issuer program")
        case .paymentAction:
            guard let action = request.paymentAction else {
                throw IssuerRequestError(code: .invalidRequest, message: "payment_action is required for kind payment_action")
            }
            return try makeActionRequest(for: action)
        case .payment:
            guard let payment = request.payment else {
                throw IssuerRequestError(code: .invalidRequest, message: "payment is required for kind payment")
            }
            return makePaymentRequest(for: payment)
        }
    }

    /// `{transactionReference, merchant{entity}, instruction{requestAutoSettlement{enabled},
    /// narrative{line1}, value{currency, amount}, paymentInstrument{type, walletToken},
    /// customerAgreement?{type, storedCardUsage}}, channel: "ecom"}`.
    public func makePaymentRequest(for payment: PaymentInstruction) -> HTTPClientRequest {
        var writer = JSONWriter(capacity: 4096)
        writer.beginObject()
        writer.key("transactionReference")
        writer.string(payment.transactionReference)
        writer.key("merchant")
        writer.beginObject()
        writer.key("entity")
        writer.string(endpoint.worldpayMerchantEntity)
        writer.endObject()
        writer.key("instruction")
        writer.beginObject()
        writer.key("requestAutoSettlement")
        writer.beginObject()
        writer.key("enabled")
        writer.bool(payment.autoSettle)
        writer.endObject()
        writer.key("narrative")
        writer.beginObject()
        writer.key("line1")
        writer.string(payment.narrative)
        writer.endObject()
        writer.key("value")
        writer.beginObject()
        writer.key("currency")
        writer.string(payment.amount.currency)
        writer.key("amount")
        writer.integer(payment.amount.value)
        writer.endObject()
        writer.key("paymentInstrument")
        writer.beginObject()
        writer.key("type")
        writer.string("card/wallet+applepay")
        writer.key("walletToken")
        writer.string(payment.walletToken.revealed)
        writer.endObject()
        if let agreement = payment.customerAgreement {
            writer.key("customerAgreement")
            writer.beginObject()
            writer.key("type")
            writer.string(agreement.agreementType)
            writer.key("storedCardUsage")
            writer.string(agreement.storedCardUsage)
            writer.endObject()
        }
        writer.endObject()
        writer.key("channel")
        writer.string("ecom")
        writer.endObject()
        return IssuerWire.bearerPost("/cardPayments/customerInitiatedTransactions", body: writer.bytes, to: endpoint)
    }

    /// `POST` to the action's link: no body for settle and cancel, `{value{amount, currency},
    /// reference}` for a partial settlement. The link must have the scheme, host and port of the
    /// endpoint's base URL (a forged link to another origin would carry our credentials there),
    /// and be that action's payment-actions path under the base URL with one link token after it
    /// (`actionLinkProblem`): another path on the Worldpay host would be another API called with
    /// our credentials.
    public func makeActionRequest(for action: PaymentActionInstruction) throws(IssuerRequestError) -> HTTPClientRequest {
        guard let base = URLOrigin(endpoint.baseURL) else {
            throw IssuerRequestError(code: .invalidRequest, message: "the Worldpay program's base_url is not an http(s) URL; an operator must fix it")
        }
        guard let origin = URLOrigin(action.link.revealed), origin == base else {
            throw IssuerRequestError(code: .invalidRequest,
                                     message: "payment_action.link does not point to the program's Worldpay host; "
                                        + "send the link from this payment's authorization result unchanged")
        }
        if let problem = Self.actionLinkProblem(action.link.revealed, action: action.action, baseURL: endpoint.baseURL) {
            throw IssuerRequestError(code: .invalidRequest, message: problem)
        }
        var body: [UInt8] = []
        var headers = [HTTPHeader(name: "Accept", value: "application/json"), endpoint.credentials.bearerHeader]
        switch action.action {
        case .settle, .cancel:
            break
        case .partialSettle:
            guard let amount = action.amount else {
                throw IssuerRequestError(code: .invalidRequest, message: "payment_action.amount is required for partial_settle")
            }
            var writer = JSONWriter(capacity: 256)
            writer.beginObject()
            writer.key("value")
            writer.beginObject()
            writer.key("amount")
            writer.integer(amount.value)
            writer.key("currency")
            writer.string(amount.currency)
            writer.endObject()
            writer.key("reference")
            writer.string(action.transactionReference)
            writer.endObject()
            body = writer.bytes
            headers.append(HTTPHeader(name: "Content-Type", value: "application/json"))
        }
        return HTTPClientRequest(method: "POST", url: action.link.revealed, headers: headers, body: body, timeoutMs: 0)
    }

    /// The query that ties `action`'s link to the authorization its `transaction_reference` names.
    func linkBinding(for action: PaymentActionInstruction) -> PaymentLinkBinding {
        PaymentLinkBinding(query: eventsQuery(reference: action.transactionReference), linkToken: PaymentLinks.token(of: action.link.revealed))
    }

    /// The payment-actions path of each action under the base URL (Worldpay's `cardPayments:settle`,
    /// `cardPayments:partialSettle` and `cardPayments:cancel` links), before the link token.
    static let actionPaths: [PaymentActionKind: String] = [
        .settle: "/payments/settlements/full/", .partialSettle: "/payments/settlements/partials/",
        .cancel: "/payments/authorizations/cancellations/",
    ]

    /// Why `link` is not `action`'s link under `baseURL` (nil when it is): after its origin (which
    /// the caller compared with the base URL's), it must be the base URL's path, the action's path
    /// (`actionPaths`), then one token of 1-1024 of `[A-Za-z0-9._~:+=-]` (not only dots): no
    /// further segment, query, fragment or percent-encoding.
    static func actionLinkProblem(_ link: String, action: PaymentActionKind, baseURL: String) -> String? {
        let prefix = (URLOrigin.target(of: baseURL) ?? "") + (actionPaths[action] ?? "/")
        let target = URLOrigin.target(of: link) ?? ""
        let token = target.hasPrefix(prefix) ? target.dropFirst(prefix.count) : ""
        let isToken = (1...1_024).contains(token.utf8.count) && !token.allSatisfy { $0 == "." }
            && token.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "+"), UInt8(ascii: "="),
                     UInt8(ascii: "-"):
                    true
                default:
                    false
                }
            }
        guard !isToken else { return nil }
        return "payment_action.link is not this payment's \(action) link (the program's Worldpay base URL, "
            + "then \(actionPaths[action] ?? "/") and the link's token); send the link from the authorization result unchanged"
    }

    /// 2xx with an `outcome` (or `lastEvent`): the payment result; 2xx without one: unusable;
    /// otherwise an error carrying `errorName`. Payment actions read as `actionAnswer`.
    public func answer(for response: HTTPClientResponse, to request: ProvisioningRequest) -> IssuerAnswer {
        if request.kind == .paymentAction, let action = request.paymentAction {
            return actionAnswer(for: response, action: action.action)
        }
        return paymentAnswer(for: response)
    }

    /// The answer to a settle, partial settle or cancel: as `paymentAnswer`, except that a 2xx
    /// without an `outcome` (Worldpay acknowledges actions with 202 and links only) reads as the
    /// action's own outcome: `sentForSettlement`, `sentForPartialSettlement`, `sentForCancellation`.
    public func actionAnswer(for response: HTTPClientResponse, action: PaymentActionKind) -> IssuerAnswer {
        if IssuerWire.isSuccess(response.status) {
            let body = IssuerWire.json(response.body)
            if body?["outcome"] == nil && body?["lastEvent"] == nil {
                let links = PaymentLinks(worldpayLinks: body?["_links"])
                return .payment(PaymentResult(outcome: Self.acknowledgedOutcome(action), links: links.isEmpty ? nil : links))
            }
        }
        return paymentAnswer(for: response)
    }

    /// The outcome Worldpay reports for an acknowledged action.
    public static func acknowledgedOutcome(_ action: PaymentActionKind) -> String {
        switch action {
        case .settle: "sentForSettlement"
        case .partialSettle: "sentForPartialSettlement"
        case .cancel: "sentForCancellation"
        }
    }

    /// The result status a payment's last Worldpay event stands for (reconciliation), or nil for
    /// an event that says nothing final (reconciliation asks again later).
    public static func status(ofEvent event: String) -> ResultStatus? {
        switch event {
        case "authorized", "sentForAuthorization": .authorized
        case "refused": .refused
        case "settled", "sentForSettlement", "partiallySettled": .settled
        case "cancelled", "sentForCancellation": .cancelled
        default: nil
        }
    }

    /// The answer to a payment or a payment action.
    public func paymentAnswer(for response: HTTPClientResponse) -> IssuerAnswer {
        let body = IssuerWire.json(response.body)
        guard IssuerWire.isSuccess(response.status) else {
            return IssuerWire.errorAnswer(status: response.status, code: IssuerWire.string(body, "errorName"),
                                          message: IssuerWire.string(body, "message"))
        }
        guard let body, let result = PaymentResult(worldpayResponse: body) else {
            return .invalidSuccessResponse(reason: "the Worldpay success lacks an outcome")
        }
        if result.outcome == "refused" && result.refusalCode == nil {
            return .invalidSuccessResponse(reason: "the Worldpay refusal lacks refusalCode")
        }
        return .payment(result)
    }

    /// `GET {base}/payments/events?transactionReference=R` for payments.
    public func makeStateQuery(for query: ReconcileQuery) -> HTTPClientRequest? {
        query.transactionReference.map(eventsQuery(reference:))
    }

    /// `GET {base}/payments/events?transactionReference=R`: the payment with that reference.
    func eventsQuery(reference: String) -> HTTPClientRequest {
        let path = "/payments/events?transactionReference=" + IssuerWire.percentEncode(reference)
        return HTTPClientRequest(method: "GET", url: endpoint.url(path),
                                 headers: [HTTPHeader(name: "Accept", value: "application/json"), endpoint.credentials.bearerHeader],
                                 timeoutMs: 0)
    }

    /// 200 `{lastEvent, _links}` → `.payment` (the last event and its links); 404 → no payment with
    /// that reference exists (`.notApplied`); anything else → `.unknown`.
    public func reconcileAnswer(for response: HTTPClientResponse, to query: ReconcileQuery) -> ReconcileAnswer {
        if response.status == 404 { return .notApplied }
        guard IssuerWire.isSuccess(response.status) else {
            return .unknown(reason: "the Worldpay events query answered HTTP \(response.status)")
        }
        guard let body = IssuerWire.json(response.body), let result = PaymentResult(worldpayResponse: body) else {
            return .unknown(reason: "the Worldpay events answer lacks lastEvent")
        }
        return .payment(result)
    }
}

import Contract
import HTTP
import Issuers
import Simulator

/// Worldpay in the simulation (`http://worldpay.sim`): Apple Pay payments by transaction
/// reference, the action links (settle, partial settle, cancel; each link's token is the
/// reference) and the events query by reference that reconciliation and the link check ask.
/// Stateful like the real one: a reference is authorized or refused once, a second authorization
/// of it is a duplicate, an action moves the payment only from a state that allows it. Which call
/// (by trace) authorized, refused or moved each payment is kept: the truth a payment's finals are
/// judged by (`FinalTruth.paymentContradiction`). Timing, lost answers and call counts are
/// `SimIssuer`'s, as for every issuer; this type holds the state and speaks the wire format.
final class SimPayments {
    static let base = "http://worldpay.sim"

    /// What a request to Worldpay asks.
    enum Route {
        case authorize(reference: String, amount: Int64)
        case act(PaymentActionKind, reference: String, amount: Int64?)
        case events(reference: String)
    }

    /// One payment's state, and which calls made it so.
    struct Payment {
        var state: String
        var amount: Int64
        var settled: Int64 = 0
        /// The trace of the call that authorized or refused it.
        var trace: String
        /// The traces of the action calls that moved it.
        var actions: [String: PaymentActionKind] = [:]
    }

    private(set) var payments: [String: Payment] = [:]

    /// The link of `action` on the payment with `reference` (what its authorization's links hold).
    static func link(_ action: PaymentActionKind, reference: String) -> String {
        let path = switch action {
        case .settle: "/payments/settlements/full/"
        case .partialSettle: "/payments/settlements/partials/"
        case .cancel: "/payments/authorizations/cancellations/"
        }
        return base + path + reference
    }

    /// What `request` asks, or nil for a path Worldpay does not have.
    static func route(_ request: HTTPClientRequest, body: JSONValue) -> Route? {
        guard request.url.hasPrefix(base) else { return nil }
        let target = String(request.url.dropFirst(base.count))
        if target == "/cardPayments/customerInitiatedTransactions", let reference = body["transactionReference"]?.stringValue {
            return .authorize(reference: reference, amount: body["instruction"]?["value"]?["amount"]?.int64Value ?? 0)
        }
        let query = "/payments/events?transactionReference="
        if target.hasPrefix(query) { return .events(reference: String(target.dropFirst(query.count))) }
        for action in [PaymentActionKind.settle, .partialSettle, .cancel] {
            let prefix = String(link(action, reference: "").dropFirst(base.count))
            if target.hasPrefix(prefix) {
                return .act(action, reference: String(target.dropFirst(prefix.count)), amount: body["value"]?["amount"]?.int64Value)
            }
        }
        return nil
    }

    /// An authorization processed: refused when `refuse`, a duplicate when the reference exists,
    /// else authorized. `applied` names what it did (`SimIssuer.applied`'s key), nil for nothing.
    func authorize(reference: String, amount: Int64, trace: String, refuse: Bool) -> (status: Int, body: [String: JSONValue], applied: String?) {
        guard payments[reference] == nil else {
            return (409, Self.error("duplicateTransactionReference"), nil)
        }
        payments[reference] = Payment(state: refuse ? "refused" : "authorized", amount: amount, trace: trace)
        let instrument: JSONValue = .object(["type": .string("card/network+masked"), "cardBin": .string("444433"),
                                             "lastFour": .string("4242"), "cardBrand": .string("visa")])
        if refuse {
            return (201, ["outcome": .string("refused"), "refusalCode": .string("5"), "refusalDescription": .string("Refused"),
                          "paymentInstrument": instrument], "worldpay/refused")
        }
        return (201, ["outcome": .string("authorized"), "paymentInstrument": instrument, "_links": links(reference)], "worldpay/payment")
    }

    /// An action processed: the payment moves when its state allows it, else 409 (404 for a
    /// reference Worldpay does not know).
    func act(_ action: PaymentActionKind, reference: String, amount: Int64?, trace: String) -> (status: Int, body: [String: JSONValue], applied: String?) {
        guard var payment = payments[reference] else { return (404, Self.error("resourceNotFound"), nil) }
        let open = payment.state == "authorized" || payment.state == "partiallySettled"
        switch action {
        case .settle where open:
            payment.state = "settled"
        case .partialSettle where open:
            let value = amount ?? 0
            guard value > 0, value <= payment.amount - payment.settled else { return (400, Self.error("amountTooHigh"), nil) }
            payment.settled += value
            payment.state = payment.settled == payment.amount ? "settled" : "partiallySettled"
        case .cancel where payment.state == "authorized":
            payment.state = "cancelled"
        default:
            return (409, Self.error("invalidPaymentState"), nil)
        }
        payment.actions[trace] = action
        payments[reference] = payment
        return (202, ["outcome": .string(WorldpayAdapter.acknowledgedOutcome(action)), "_links": links(reference)], "worldpay/\(action.rawValue)")
    }

    /// The events query: the payment's last event and its links, or 404.
    func events(reference: String) -> (status: Int, body: [String: JSONValue]) {
        guard let payment = payments[reference] else { return (404, Self.error("resourceNotFound")) }
        return (200, ["lastEvent": .string(payment.state), "_links": links(reference)])
    }

    /// What Worldpay did with the request of `kind` (asking `action`) whose trace is `trace`, on
    /// the payment with `reference`: the facts its finals are judged by.
    func facts(reference: String, trace: String, calls: Int) -> FinalTruth.PaymentFacts {
        let payment = payments[reference]
        return FinalTruth.PaymentFacts(calls: calls, authorized: payment?.trace == trace && payment?.state != "refused",
                                       refused: payment?.trace == trace && payment?.state == "refused",
                                       actionApplied: payment?.actions[trace])
    }

    /// The payment's links as its state allows them (`_links`): events always, settle and partial
    /// settle while open, cancel while authorized.
    private func links(_ reference: String) -> JSONValue {
        let state = payments[reference]?.state ?? ""
        var links: [String: JSONValue] = ["cardPayments:events": .object(["href": .string(Self.base + "/payments/events/" + reference)])]
        if state == "authorized" || state == "partiallySettled" {
            links["cardPayments:settle"] = .object(["href": .string(Self.link(.settle, reference: reference))])
            links["cardPayments:partialSettle"] = .object(["href": .string(Self.link(.partialSettle, reference: reference))])
        }
        if state == "authorized" { links["cardPayments:cancel"] = .object(["href": .string(Self.link(.cancel, reference: reference))]) }
        return .object(links)
    }

    private static func error(_ name: String) -> [String: JSONValue] {
        ["errorName": .string(name), "message": .string("simulated")]
    }
}

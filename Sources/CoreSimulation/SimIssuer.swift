import Contract
import HTTP
import Simulator

/// The simulated issuers, as HTTP (`HTTPExchanging`) under the real `IssuerClient` and adapters:
/// Imprint (Apple Pay, Google Wallet and Legacy Google Pay, with its wallet-token state query) at
/// `http://imprint.sim`, DCS (Apple Pay and Google Wallet, no state query) at `http://dcs.sim`,
/// Gnosis Pay (Apple Pay, no state query) at `http://gnosis.sim` and Worldpay (Apple Pay payments
/// and their actions, with the events query; `SimPayments`) at `http://worldpay.sim`. Stateful like the real ones: a provisioning applies a wallet
/// token; a second provisioning of the same card in the same wallet on the same device answers
/// "already provisioned", and a second use of a handshake is refused. Each card behaves as the workload chose: answers
/// at once or slowly (longer than a revoke drain), applies and loses the answer (504 or no answer
/// at all), loses the answer without applying, or refuses (inactive card). A payment behaves as
/// its transaction reference was told to (an inactive one is refused); its action as the payment.
///
/// Every call is counted per handshake (`HandshakeReference`): the promise "a handshake reaches the
/// issuer at most once"; and per request, by the trace id of the call's `traceparent` (a child of
/// the request's own): "a request reaches the issuer at most once, and its call carries its trace".
/// Which handshake made which token is kept too: the truth each final is judged by (`FinalTruth`).
final class SimIssuer: HTTPExchanging, @unchecked Sendable {
    /// How a card behaves.
    enum Behaviour: CaseIterable {
        /// `appliedLate`: the issuer processes the call after the client's timeout, and applies it.
        case ok, slow, appliedThen504, appliedThenSilent, unappliedThen504, inactive, appliedLate
    }

    /// One wallet token: its wallet, the device (`ReconcileQuery.deviceRef`'s form: hex SHA-256 of
    /// the Apple leaf or the Google device id), when it was made, and the handshake that made it.
    struct Token {
        var wallet: Wallet
        var device: String
        var createdAtMs: Int64
        var handshake: String
        /// The trace id of the call that made it.
        var trace: String
    }

    let world: SimWorld
    /// Calls per handshake reference.
    private(set) var calls: [String: Int] = [:]
    /// Calls per trace id ("-" for a call without a well-formed `traceparent`).
    private(set) var callsPerTrace: [String: Int] = [:]
    /// Wallet tokens per card.
    private(set) var tokens: [String: [Token]] = [:]
    /// Each card's behaviour (ok when not listed).
    var behaviours: [String: Behaviour] = [:]
    /// Calls the issuer applied after the client's timeout.
    private(set) var appliedLate = 0
    /// Calls applied, per issuer and wallet (`imprint/apple_pay`...), and Worldpay's per outcome
    /// (`worldpay/payment`, `worldpay/refused`, `worldpay/settle`...).
    private(set) var applied: [String: Int] = [:]
    /// Worldpay's payments.
    let payments = SimPayments()
    /// Until when every state query (Imprint's wallet tokens, Worldpay's events) answers 503: an
    /// outage of the issuers' read APIs, which runs reconciliations out of attempts.
    var queryOutageUntilMs: Int64 = 0

    init(world: SimWorld) {
        self.world = world
    }

    func execute(_ request: HTTPClientRequest, completion: @escaping @Sendable (Result<HTTPClientResponse, HTTPTransportError>) -> Void) {
        let startedMs = world.nowMs
        let path = request.url.split(separator: "/", omittingEmptySubsequences: true).dropFirst(2).map(String.init)
        let body = (try? JSONParser().parse(request.body)) ?? .null
        func call(_ card: String, _ wallet: Wallet, _ issuer: Dialect) {
            callsPerTrace[Self.traceID(request), default: 0] += 1
            let handshake: String, device: String
            switch wallet {
            case .applePay:
                let names = issuer == .dcs ? ("appleNonce", "applePublicCertificates") : ("nonce", "certificates")
                handshake = HandshakeReference.apple(nonce: body[names.0]?.stringValue ?? "?")
                let leaf = body[names.1]?.arrayValue?.first?.stringValue.flatMap(Crypto.base64Decode) ?? []
                device = Crypto.hex(Crypto.sha256(leaf))
            case .googleWallet, .googlePay:
                let dcs = issuer == .dcs
                let deviceID = body[dcs ? "deviceId" : "device_id"]
                handshake = Self.handshake(body[dcs ? "clientCustomerId" : "wallet_id"], deviceID, dcs ? nil : body["server_session_id"])
                device = Crypto.hex(Crypto.sha256(utf8: deviceID?.stringValue ?? "?"))
            }
            provision(card: card, wallet: wallet, device: device, handshake: handshake, trace: Self.traceID(request), dialect: issuer,
                      timeoutMs: request.timeoutMs, startedMs: startedMs, completion: completion)
        }
        if request.url.hasPrefix("http://imprint.sim"), path.count == 5, path[3] == "provision", let wallet = Wallet(rawValue: path[4]) {
            call(path[2], wallet, .imprint)
        } else if request.url.hasPrefix("http://imprint.sim"), path.count == 4, path[3] == "wallet_tokens" {
            let card = path[2]
            world.after(world.int(5...150), nil, "issuer state query") { [self] in
                guard world.nowMs >= queryOutageUntilMs, world.chance(0.95) else {
                    return respond(503, ["error": .object(["code": .string("unavailable")])], startedMs, completion)
                }
                let list: [JSONValue] = (tokens[card] ?? []).map { token in
                    .object(["wallet": .string(token.wallet.rawValue), "device_ref": .string(token.device),
                             "created_at": .string(RFC3339.format(milliseconds: token.createdAtMs)), "status": .string("active"),
                             "handshake_ref": .string(token.handshake)])
                }
                respond(200, ["data": .array(list)], startedMs, completion)
            }
        } else if request.url.hasPrefix("http://dcs.sim"), path.last == "google-bind-wallet" {
            call(body["cardId"]?.stringValue ?? "", .googleWallet, .dcs)
        } else if request.url.hasPrefix("http://dcs.sim"), path.last == "apple-bind-wallet" {
            // DCS knows the card by its user (the workload's user id is "u-" and the card id).
            call(String(body["externalUserId"]?.stringValue?.dropFirst(2) ?? ""), .applePay, .dcs)
        } else if request.url.hasPrefix("http://gnosis.sim"), path.count == 6, path[4] == "apple-pay", path[5] == "provision" {
            call(path[3], .applePay, .gnosis)
        } else if let route = SimPayments.route(request, body: body) {
            worldpay(route, request: request, startedMs: startedMs, completion: completion)
        } else {
            respond(404, ["error": .object(["code": .string("not_found")])], startedMs, completion)
        }
    }

    /// Whose wire format an answer takes.
    enum Dialect {
        case imprint, dcs, gnosis
    }

    /// The trace id of `request`'s `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`), or "-".
    static func traceID(_ request: HTTPClientRequest) -> String {
        guard let header = request.headers.last(where: { $0.name.lowercased() == "traceparent" })?.value else { return "-" }
        let parts = header.split(separator: "-")
        guard parts.count == 4, parts[1].count == 32 else { return "-" }
        return String(parts[1])
    }

    private static func handshake(_ wallet: JSONValue?, _ device: JSONValue?, _ session: JSONValue?) -> String {
        HandshakeReference.google(walletID: wallet?.stringValue ?? "?", deviceID: device?.stringValue ?? "?",
                                  serverSessionID: session?.stringValue)
    }

    /// What the issuer did with the request whose handshake is `handshake` and whose trace is
    /// `trace`, for `card` in `wallet` on `device`: the facts its finals are judged by. A Legacy
    /// Google Pay handshake recurs across requests, so its calls and token are the trace's.
    func facts(handshake: String, trace: String, card: String, wallet: Wallet, device: String) -> FinalTruth.Facts {
        let held = tokens[card]?.filter { $0.wallet == wallet && $0.device == device } ?? []
        let legacy = wallet == .googlePay
        return FinalTruth.Facts(calls: legacy ? callsPerTrace[trace] ?? 0 : calls[handshake] ?? 0,
                                applied: held.contains { legacy ? $0.trace == trace : $0.handshake == handshake },
                                cardInWalletSinceMs: held.map(\.createdAtMs).min())
    }

    /// What Worldpay did with the payment, or payment action, request whose trace is `trace`, on
    /// the payment with `reference`.
    func paymentFacts(reference: String, trace: String) -> FinalTruth.PaymentFacts {
        payments.facts(reference: reference, trace: trace, calls: callsPerTrace[trace] ?? 0)
    }

    /// A provisioning call: applied (or not) when the issuer processes it, answered when its
    /// behaviour says, or timed out by the client's budget.
    private func provision(card: String, wallet: Wallet, device: String, handshake: String, trace: String, dialect: Dialect, timeoutMs: Int,
                           startedMs: Int64,
                           completion: @escaping @Sendable (Result<HTTPClientResponse, HTTPTransportError>) -> Void) {
        calls[handshake, default: 0] += 1
        let behaviour = behaviours[card] ?? .ok
        let firstUse = calls[handshake] == 1
        exchange(behaviour: behaviour, timeoutMs: timeoutMs, startedMs: startedMs, completion: completion) { [self] in
            apply(card: card, wallet: wallet, device: device, handshake: handshake, trace: trace, firstUse: firstUse,
                  behaviour: behaviour, dialect: dialect)
        }
    }

    /// A Worldpay request: an authorization or an action is a call (counted per reference and per
    /// trace, timed and answered as its reference's behaviour says); the events query answers
    /// like Imprint's state query.
    private func worldpay(_ route: SimPayments.Route, request: HTTPClientRequest, startedMs: Int64,
                          completion: @escaping @Sendable (Result<HTTPClientResponse, HTTPTransportError>) -> Void) {
        let trace = Self.traceID(request)
        switch route {
        case .events(let reference):
            world.after(world.int(5...150), nil, "issuer state query") { [self] in
                guard world.nowMs >= queryOutageUntilMs, world.chance(0.95) else {
                    return respond(503, ["errorName": .string("serviceUnavailable")], startedMs, completion)
                }
                let (status, body) = payments.events(reference: reference)
                respond(status, body, startedMs, completion)
            }
        case .authorize(let reference, let amount):
            callsPerTrace[trace, default: 0] += 1
            calls["payment/" + reference, default: 0] += 1
            let behaviour = behaviours[reference] ?? .ok
            exchange(behaviour: behaviour, timeoutMs: request.timeoutMs, startedMs: startedMs, completion: completion) { [self] in
                if behaviour == .unappliedThen504 { return (504, [:]) }
                return worldpayApplied(payments.authorize(reference: reference, amount: amount, trace: trace, refuse: behaviour == .inactive),
                                       behaviour: behaviour, reference: reference)
            }
        case .act(let action, let reference, let amount):
            callsPerTrace[trace, default: 0] += 1
            calls["action/" + reference, default: 0] += 1
            let behaviour = behaviours[reference].map { $0 == .inactive ? .ok : $0 } ?? .ok
            exchange(behaviour: behaviour, timeoutMs: request.timeoutMs, startedMs: startedMs, completion: completion) { [self] in
                if behaviour == .unappliedThen504 { return (504, [:]) }
                return worldpayApplied(payments.act(action, reference: reference, amount: amount, trace: trace), behaviour: behaviour,
                                       reference: reference)
            }
        }
    }

    /// Counts what a Worldpay call did, and gives its answer.
    private func worldpayApplied(_ outcome: (status: Int, body: [String: JSONValue], applied: String?), behaviour: Behaviour,
                                 reference: String) -> (Int, [String: JSONValue]) {
        if let applied = outcome.applied {
            self.applied[applied, default: 0] += 1
            if behaviour == .appliedLate { appliedLate += 1 }
            world.note("worldpay: \(applied) for \(reference)")
        }
        return (outcome.status, outcome.body)
    }

    /// One call's timing, as `behaviour` says: `apply` runs when the issuer processes the call
    /// (whatever happens to its answer), and its answer is given, lost to a 504, or never comes
    /// before the client's timeout.
    private func exchange(behaviour: Behaviour, timeoutMs: Int, startedMs: Int64,
                          completion: @escaping @Sendable (Result<HTTPClientResponse, HTTPTransportError>) -> Void,
                          apply: @escaping () -> (Int, [String: JSONValue])) {
        let latency: Int64 = switch behaviour {
        case .slow: world.int(4_000...14_000)
        case .appliedThenSilent: .max / 4
        default: world.int(10...400)
        }
        let processedMs = behaviour == .appliedLate
            ? startedMs + Int64(max(1, timeoutMs)) + world.int(1...3_000)
            : world.nowMs + min(latency, world.int(5...200))
        // The issuer processes the request whatever happens to its answer.
        var answer: (status: Int, body: [String: JSONValue])?
        world.at(processedMs, nil, "issuer processes a call") {
            answer = apply()
        }
        let timeoutAt = startedMs + Int64(max(1, timeoutMs))
        if latency >= Int64(timeoutMs) || behaviour == .appliedLate {
            world.at(timeoutAt, nil, "issuer call times out") {
                completion(.failure(HTTPTransportError(kind: .timedOut, requestMayHaveBeenSent: true, message: "simulated timeout",
                                                       elapsedMs: Double(timeoutMs))))
            }
            return
        }
        world.at(max(world.nowMs + latency, processedMs), nil, "issuer answers") { [self] in
            switch behaviour {
            case .appliedThen504, .unappliedThen504:
                respond(504, [:], startedMs, completion)
            default:
                let (status, body) = answer ?? (500, [:])
                respond(status, body, startedMs, completion)
            }
        }
    }

    /// What the issuer does with a call when it processes it: its HTTP answer.
    private func apply(card: String, wallet: Wallet, device: String, handshake: String, trace: String, firstUse: Bool, behaviour: Behaviour,
                       dialect: Dialect) -> (Int, [String: JSONValue]) {
        func error(_ status: Int, _ code: String) -> (Int, [String: JSONValue]) {
            switch dialect {
            case .imprint: (status, ["error": .object(["code": .string(code), "message": .string("simulated")])])
            case .dcs: (200, ["code": .string(code), "message": .string("simulated")])
            case .gnosis: (status, ["code": .string(code), "message": .string("simulated")])
            }
        }
        let codes: (inactive: String, already: String, used: String) = switch dialect {
        case .imprint: ("payment_method_not_active", "already_provisioned", "invalid_request")
        case .dcs: ("CARD_STATUS_INVALID", "WALLET_ALREADY_BOUND", "NONCE_USED")
        case .gnosis: ("card_not_active", "already_provisioned", "invalid_request")
        }
        if behaviour == .inactive { return error(422, codes.inactive) }
        if tokens[card]?.contains(where: { $0.wallet == wallet && $0.device == device }) == true { return error(409, codes.already) }
        // Legacy Google Pay's wallet and device ids are stable: a retry re-sends them.
        if !firstUse && wallet != .googlePay { return error(400, codes.used) }
        if behaviour == .unappliedThen504 { return (504, [:]) }
        tokens[card, default: []].append(Token(wallet: wallet, device: device, createdAtMs: world.nowMs, handshake: handshake, trace: trace))
        if behaviour == .appliedLate { appliedLate += 1 }
        applied["\(dialect)/\(wallet.rawValue)", default: 0] += 1
        world.note("issuer applied \(handshake.prefix(12)) for card \(card) (\(wallet.rawValue))")
        let apple: [String: JSONValue] = ["activation_data": .string(Crypto.base64Encode(Array("act-\(card)".utf8))),
                                          "encrypted_pass_data": .string(Crypto.base64Encode(Array("pass-\(card)".utf8))),
                                          "ephemeral_public_key": .string(Crypto.base64Encode(Array("epk-\(card)".utf8)))]
        switch dialect {
        case .dcs where wallet == .applePay:
            return (200, ["code": .string("SYS_SUCCESS"), "data": .object(["activationData": apple["activation_data"]!,
                                                                            "encryptedPassData": apple["encrypted_pass_data"]!,
                                                                            "ephemeralPublicKey": apple["ephemeral_public_key"]!])])
        case .dcs:
            return (200, ["code": .string("SYS_SUCCESS"), "data": .object(["opaquePaymentCard": .string("opc-\(card)")])])
        case .gnosis:
            return (200, apple)
        case .imprint:
            let payload: JSONValue = switch wallet {
            case .applePay: .object(apple)
            case .googleWallet: .object(["opaque_payment_card": .string("opc-\(card)")])
            case .googlePay: .object(["opaque_payment_card": .string("opc-\(card)"), "network": .string("VISA")])
            }
            return (200, ["wallet": .string(wallet.rawValue), "provisioning_payload": payload])
        }
    }

    private func respond(_ status: Int, _ body: [String: JSONValue], _ startedMs: Int64,
                         _ completion: @Sendable (Result<HTTPClientResponse, HTTPTransportError>) -> Void) {
        completion(.success(HTTPClientResponse(status: status, headers: [HTTPHeader(name: "Content-Type", value: "application/json")],
                                               body: body.isEmpty ? [] : JSONWriter.encode(.object(body)),
                                               elapsedMs: Double(world.nowMs - startedMs))))
    }
}

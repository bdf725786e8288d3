import Contract
import HTTP

/// Worldpay Apple Pay payments (`/worldpay`): customer-initiated transactions, the action links
/// (settle, partial settle, cancel, events) and the recovery query by transaction reference.
struct WorldpayAPI {
    let engine: SimulatorEngine

    func route(_ request: HTTPServerRequest, _ path: [String], _ responder: HTTPResponder) {
        switch path.count {
        case 2 where path == ["cardPayments", "customerInitiatedTransactions"]:
            guard request.method == "POST" else { return SimulatorEngine.methodNotAllowed("POST", responder) }
            authorize(request, responder)
        case 2 where path == ["payments", "events"]:
            guard request.method == "GET" else { return SimulatorEngine.methodNotAllowed("GET", responder) }
            recoveryQuery(request, responder)
        case 3 where path[0] == "payments" && path[1] == "events":
            guard request.method == "GET" else { return SimulatorEngine.methodNotAllowed("GET", responder) }
            events(request, token: path[2], responder)
        case 4 where path[0] == "payments":
            let action: PaymentAction
            switch (path[1], path[2]) {
            case ("settlements", "full"): action = .settle
            case ("settlements", "partials"): action = .partialSettle
            case ("authorizations", "cancellations"): action = .cancel
            default: return SimulatorEngine.notFound(responder)
            }
            guard request.method == "POST" else { return SimulatorEngine.methodNotAllowed("POST", responder) }
            follow(request, action, token: path[3], responder)
        default:
            SimulatorEngine.notFound(responder)
        }
    }

    // MARK: - Wire shapes

    static func error(_ status: Int, _ name: String, _ message: String, headers: [HTTPHeader] = []) -> HTTPServerResponse {
        SimulatorEngine.json(status, .object(["errorName": .string(name), "message": .string(message)]), headers: headers)
    }

    static func schemaError(_ problem: FieldProblem) -> HTTPServerResponse {
        let missing = problem.message.hasSuffix(" is required")
        return SimulatorEngine.json(400, .object([
            "errorName": .string("bodyDoesNotMatchSchema"),
            "message": .string("The json body provided does not match the expected schema"),
            "validationErrors": .array([.object([
                "errorName": .string(missing ? "fieldIsMissing" : "fieldHasInvalidValue"),
                "message": .string(problem.message),
                "jsonPath": .string("$." + problem.field),
            ])]),
        ]))
    }

    private static let unauthorized = error(401, "accessDenied", "missing or unknown credentials; send Authorization: Bearer <key>")
    private static let notFound = error(404, "resourceNotFound", "no payment matches this link or reference")

    private func links(_ payment: WorldpayPayment, base: String) -> JSONValue {
        .object(linkMembers(payment, base: base))
    }

    private func linkMembers(_ payment: WorldpayPayment, base: String) -> [String: JSONValue] {
        let token = engine.linkToken(paymentID: payment.id)
        func link(_ path: String) -> JSONValue { .object(["href": .string(base + "/worldpay/payments/" + path + "/" + token)]) }
        var members: [String: JSONValue] = ["cardPayments:events": link("events")]
        switch payment.state {
        case .authorized:
            members["cardPayments:settle"] = link("settlements/full")
            members["cardPayments:partialSettle"] = link("settlements/partials")
            members["cardPayments:cancel"] = link("authorizations/cancellations")
        case .partiallySettled:
            members["cardPayments:settle"] = link("settlements/full")
            members["cardPayments:partialSettle"] = link("settlements/partials")
        case .settled, .cancelled, .refused:
            break
        }
        members["curies"] = .array([.object(["name": .string("cardPayments"), "href": .string(base + "/worldpay/rels/payments/{rel}"),
                                             "templated": .bool(true)])])
        return members
    }

    private static func instrument(_ payment: WorldpayPayment, tokenDigest: [UInt8]) -> JSONValue {
        .object([
            "type": .string("card/network+masked"),
            "cardBin": .string("444433"),
            "lastFour": .string(payment.lastFour),
            "tokenNumber": .string("444433******" + payment.lastFour),
            "countryCode": .string("GB"),
            "expiryDate": .object(["month": .integer(11), "year": .integer(2029)]),
            "cardBrand": .string("visa"),
            "fundingType": .string("debit"),
            "category": .string("consumer"),
            "issuerName": .string("SIMULATED ISSUER"),
            "paymentAccountReference": .string("SIM" + Crypto.hex(Array(tokenDigest.prefix(13))).uppercased()),
        ])
    }

    // MARK: - Authorization

    private struct Instruction {
        let reference: String
        let currency: String
        let amount: Int64
        let autoSettle: Bool
        let hasAgreement: Bool
        let walletToken: String
    }

    private func parse(_ parsed: BodyReader?) throws(FieldProblem) -> Instruction {
        let root = try BodyReader.required(parsed)
        let reference = try root.requiredString("transactionReference")
        guard reference.utf8.count <= 64 else {
            throw FieldProblem(field: "transactionReference", message: "transactionReference must be at most 64 characters")
        }
        _ = try root.requiredObject("merchant").requiredString("entity")
        _ = try root.optionalString("channel")
        let instruction = try root.requiredObject("instruction")
        let value = try instruction.requiredObject("value")
        let currency = try value.requiredString("currency")
        guard currency.utf8.count == 3, currency.utf8.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }) else {
            throw FieldProblem(field: value.field("currency"), message: "\(value.field("currency")) must be an ISO 4217 code")
        }
        let amount = try value.requiredInteger("amount")
        guard amount > 0 else { throw FieldProblem(field: value.field("amount"), message: "\(value.field("amount")) must be positive") }
        let narrative = try instruction.requiredObject("narrative").requiredString("line1")
        guard narrative.count <= 24 else {
            throw FieldProblem(field: "instruction.narrative.line1", message: "instruction.narrative.line1 must be at most 24 characters")
        }
        var autoSettle = false
        if let settlement = try instruction.optionalObject("requestAutoSettlement") {
            guard let enabled = try settlement.optionalBool("enabled") else {
                throw FieldProblem(field: settlement.field("enabled"), message: "\(settlement.field("enabled")) is required")
            }
            autoSettle = enabled
        }
        let agreement = try instruction.optionalObject("customerAgreement")
        if let agreement {
            _ = try agreement.requiredString("type")
            let usage = try agreement.requiredString("storedCardUsage")
            guard usage == "first" || usage == "subsequent" else {
                throw FieldProblem(field: agreement.field("storedCardUsage"), message: "\(agreement.field("storedCardUsage")) must be first or subsequent")
            }
        }
        let instrument = try instruction.requiredObject("paymentInstrument")
        guard try instrument.requiredString("type") == "card/wallet+applepay" else {
            throw FieldProblem(field: instrument.field("type"), message: "\(instrument.field("type")) must be card/wallet+applepay")
        }
        let token = try instrument.requiredString("walletToken")
        try Self.checkWalletToken(token, field: instrument.field("walletToken"))
        return Instruction(reference: reference, currency: currency, amount: amount, autoSettle: autoSettle,
                           hasAgreement: agreement != nil, walletToken: token)
    }

    /// The Apple Pay `paymentData`: a JSON object with `version`, base64 `data` and `signature`, and a `header` object.
    private static func checkWalletToken(_ token: String, field: String) throws(FieldProblem) {
        guard let document = try? JSONParser(maxDepth: 8, maxBytes: 64 * 1024).parse(token), case .object(let members) = document else {
            throw FieldProblem(field: field, message: "\(field) must be the Apple Pay paymentData JSON")
        }
        guard let version = members["version"]?.stringValue, version == "EC_v1" || version == "RSA_v1" else {
            throw FieldProblem(field: field, message: "\(field) must carry version EC_v1 or RSA_v1")
        }
        for key in ["data", "signature"] {
            guard let text = members[key]?.stringValue, let bytes = Crypto.base64Decode(text), !bytes.isEmpty else {
                throw FieldProblem(field: field, message: "\(field) must carry base64 \(key)")
            }
        }
        guard case .object? = members["header"] else {
            throw FieldProblem(field: field, message: "\(field) must carry a header object")
        }
    }

    private func authorize(_ request: HTTPServerRequest, _ responder: HTTPResponder) {
        let lenient = BodyReader.lenient(request.body)
        let reference = lenient?["transactionReference"]?.stringValue ?? ""
        engine.record(.worldpay, cardID: reference) {
            SimulatorCall.worldpayHandshake(walletToken: lenient?["instruction"]?["paymentInstrument"]?["walletToken"]?.stringValue ?? "")
        }
        let magic = MagicBehaviour(identifier: reference, allowsRefusal: true)
        let early = engine.delay(for: magic, issuer: .worldpay)
        guard let program = engine.bearerProgram(.worldpay, request) else {
            return engine.send(Self.unauthorized, after: early, responder)
        }
        let instruction: Instruction
        do throws(FieldProblem) {
            instruction = try parse(lenient)
        } catch {
            return engine.send(Self.schemaError(error), after: early, responder)
        }
        let tokenDigest = Crypto.sha256(utf8: instruction.walletToken)
        let lastFour = PayloadFactory.last4(cardID: Crypto.hex(tokenDigest))
        let (outcome, delayMs) = engine.state.withLock { state in
            state.decidePayment(program: program.name, reference: instruction.reference, magic: magic, currency: instruction.currency,
                                amount: instruction.amount, autoSettle: instruction.autoSettle, lastFour: lastFour)
        }
        let base = engine.baseURL(request)
        let response: HTTPServerResponse
        switch outcome {
        case .authorized(let payment):
            var linkMembers = linkMembers(payment, base: base)
            if instruction.hasAgreement {
                linkMembers["tokens:token"] = .object(["href": .string(base + "/worldpay/tokens/" + engine.linkToken(paymentID: payment.id))])
            }
            response = SimulatorEngine.json(201, .object([
                "outcome": .string("authorized"),
                "riskFactors": .array([
                    .object(["risk": .string("notChecked"), "detail": .string("postcode"), "type": .string("avs")]),
                    .object(["risk": .string("notChecked"), "detail": .string("address"), "type": .string("avs")]),
                ]),
                "scheme": .object(["reference": .string("SIM" + Crypto.hex(Array(tokenDigest.suffix(8))))]),
                "paymentInstrument": Self.instrument(payment, tokenDigest: tokenDigest),
                "_links": .object(linkMembers),
            ]))
        case .refused(let payment):
            response = SimulatorEngine.json(201, .object([
                "outcome": .string("refused"),
                "refusalCode": .string("5"),
                "refusalDescription": .string("Refused"),
                "paymentInstrument": Self.instrument(payment, tokenDigest: tokenDigest),
            ]))
        case .duplicate:
            response = Self.error(409, "duplicateTransactionReference",
                                  "a payment with this transactionReference exists; query its events or use a new reference")
        case .unavailable:
            response = Self.error(503, "serviceUnavailable", "the service is temporarily unavailable; retry later")
        case .rateLimited(let seconds):
            response = Self.error(429, "tooManyRequests", "too many requests; retry after \(seconds) s", headers: SimulatorEngine.retryAfter(seconds))
        case .gatewayTimeout, .hang:
            response = SimulatorEngine.gatewayTimeout
        }
        engine.send(response, after: delayMs, responder)
    }

    // MARK: - Follow-ups and queries

    private func follow(_ request: HTTPServerRequest, _ action: PaymentAction, token: String, _ responder: HTTPResponder) {
        guard let program = engine.bearerProgram(.worldpay, request) else { return responder.respond(Self.unauthorized) }
        guard let paymentID = engine.paymentID(fromLinkToken: token),
              let payment = engine.state.withLock({ $0.payment(id: paymentID, program: program.name) })
        else { return responder.respond(Self.notFound) }
        engine.record(.worldpay, cardID: payment.reference) { action.rawValue }
        let delayMs = engine.delay(for: MagicBehaviour(identifier: payment.reference, allowsRefusal: true), issuer: .worldpay)
        var value: (currency: String, amount: Int64)?
        if action == .partialSettle {
            do throws(FieldProblem) {
                let body = try BodyReader(body: request.body)
                let amount = try body.requiredObject("value")
                value = (try amount.requiredString("currency"), try amount.requiredInteger("amount"))
                guard let value, value.amount > 0 else {
                    throw FieldProblem(field: "value.amount", message: "value.amount must be positive")
                }
            } catch {
                return engine.send(Self.schemaError(error), after: delayMs, responder)
            }
        }
        let outcome = engine.state.withLock { $0.apply(action, paymentID: paymentID, program: program.name, value: value) }
        let response: HTTPServerResponse
        switch outcome {
        case .done(let updated):
            let outcomeName: String
            switch action {
            case .settle: outcomeName = "sentForSettlement"
            case .partialSettle: outcomeName = "sentForPartialSettlement"
            case .cancel: outcomeName = "sentForCancellation"
            }
            response = SimulatorEngine.json(202, .object(["outcome": .string(outcomeName), "_links": links(updated, base: engine.baseURL(request))]))
        case .notFound:
            response = Self.notFound
        case .conflict(let state):
            response = Self.error(409, "invalidPaymentState", "the payment is \(state.rawValue); \(action.rawValue) is not possible")
        case .amountTooHigh(let remaining):
            response = Self.error(400, "amountTooHigh", "value.amount exceeds the \(remaining) still open for settlement")
        case .currencyMismatch(let expected):
            response = Self.schemaError(FieldProblem(field: "value.currency", message: "value.currency must be \(expected), the authorized currency"))
        }
        engine.send(response, after: delayMs, responder)
    }

    private func eventsAnswer(_ payment: WorldpayPayment, _ request: HTTPServerRequest) -> HTTPServerResponse {
        SimulatorEngine.json(200, .object(["lastEvent": .string(payment.state.rawValue), "_links": links(payment, base: engine.baseURL(request))]))
    }

    private func events(_ request: HTTPServerRequest, token: String, _ responder: HTTPResponder) {
        guard let program = engine.bearerProgram(.worldpay, request) else { return responder.respond(Self.unauthorized) }
        guard let paymentID = engine.paymentID(fromLinkToken: token),
              let payment = engine.state.withLock({ $0.payment(id: paymentID, program: program.name) })
        else { return responder.respond(Self.notFound) }
        responder.respond(eventsAnswer(payment, request))
    }

    private func recoveryQuery(_ request: HTTPServerRequest, _ responder: HTTPResponder) {
        guard let program = engine.bearerProgram(.worldpay, request) else { return responder.respond(Self.unauthorized) }
        guard let reference = request.query["transactionReference"], !reference.isEmpty else {
            return responder.respond(Self.error(400, "queryParameterMissing", "send ?transactionReference=<reference>"))
        }
        guard let payment = engine.state.withLock({ $0.payment(program: program.name, reference: reference) }) else {
            return responder.respond(Self.notFound)
        }
        responder.respond(eventsAnswer(payment, request))
    }
}

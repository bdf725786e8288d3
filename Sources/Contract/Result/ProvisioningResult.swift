/// A result on `provisioning.results` (CONTRACT section 4).
///
/// `encodedJSON()` always writes every key, `null` where absent, in this order: `version`,
/// `request_id`, `program`, `issuer`, `wallet`, `kind`, `status`, `final`, `code`, `message`,
/// `next_action`, `issuer_code`, `http_status`, `payload`, `payment`, `timing`, `attempt`.
public struct ProvisioningResult: Sendable, Hashable {
    /// Schema version (1).
    public var version: Int
    /// The request's id.
    public var requestID: String
    /// The program, when known.
    public var program: String?
    /// The issuer, when the program was resolved.
    public var issuer: IssuerKind?
    /// The wallet, when known.
    public var wallet: Wallet?
    /// The kind, when known.
    public var kind: RequestKind?
    /// The status.
    public var status: ResultStatus
    /// Whether this result is final (`final`).
    public var isFinal: Bool
    /// The normalized code (`null` on success).
    public var code: ErrorCode?
    /// Our explanation: names fields, never quotes secrets or issuer free text.
    public var message: String
    /// What the app should do next.
    public var nextAction: NextAction
    /// The issuer's own code, verbatim.
    public var issuerCode: String?
    /// The issuer's HTTP status.
    public var httpStatus: Int?
    /// The JWE compact serialization of the payload, encrypted to `reply.jwk`: a provisioning
    /// payload, or an authorized payment's action links (`PaymentLinks.plaintextJSON()`).
    public var payload: String?
    /// Payment details (payment kinds).
    public var payment: PaymentResult?
    /// Timestamps.
    public var timing: ResultTiming
    /// Which attempt this is (1 for the first).
    public var attempt: Int

    /// The identity of the request it answers (program, request id); nil when it names no program
    /// (an answer to a message whose program could not be read).
    public var identity: RequestIdentity? { program.map { RequestIdentity(program: $0, requestID: requestID) } }

    /// Creates a result.
    public init(version: Int = 1, requestID: String, program: String?, issuer: IssuerKind?, wallet: Wallet?,
                kind: RequestKind?, status: ResultStatus, isFinal: Bool, code: ErrorCode?, message: String,
                nextAction: NextAction, issuerCode: String? = nil, httpStatus: Int? = nil, payload: String? = nil,
                payment: PaymentResult? = nil, timing: ResultTiming = ResultTiming(), attempt: Int = 1) {
        self.version = version
        self.requestID = requestID
        self.program = program
        self.issuer = issuer
        self.wallet = wallet
        self.kind = kind
        self.status = status
        self.isFinal = isFinal
        self.code = code
        self.message = message
        self.nextAction = nextAction
        self.issuerCode = issuerCode
        self.httpStatus = httpStatus
        self.payload = payload
        self.payment = payment
        self.timing = timing
        self.attempt = attempt
    }

    /// The result for a request answered with `outcome`.
    public init(request: ProvisioningRequest, issuer: IssuerKind?, outcome: Outcome, payload: String? = nil,
                payment: PaymentResult? = nil, timing: ResultTiming, attempt: Int = 1) {
        self.init(requestID: request.requestID, program: request.program, issuer: issuer, wallet: request.wallet,
                  kind: request.kind, status: outcome.status, isFinal: outcome.isFinal, code: outcome.code,
                  message: outcome.message, nextAction: outcome.nextAction, issuerCode: outcome.issuerCode,
                  httpStatus: outcome.httpStatus, payload: payload, payment: payment, timing: timing, attempt: attempt)
    }

    /// The `rejected` result for a request that failed decoding.
    public init(rejection: RequestRejection, issuer: IssuerKind? = nil, timing: ResultTiming, attempt: Int = 1) {
        let outcome = OutcomeTable.rejection(code: rejection.code, message: rejection.message)
        self.init(requestID: rejection.requestID, program: rejection.program, issuer: issuer, wallet: rejection.wallet,
                  kind: rejection.kind, status: outcome.status, isFinal: outcome.isFinal, code: outcome.code,
                  message: outcome.message, nextAction: outcome.nextAction, timing: timing, attempt: attempt)
    }

    /// The `rejected` result for a request that failed validation.
    public init(request: ProvisioningRequest, issuer: IssuerKind?, failure: ValidationFailure, timing: ResultTiming,
                attempt: Int = 1) {
        self.init(request: request, issuer: issuer, outcome: OutcomeTable.rejection(code: failure.code, message: failure.message),
                  timing: timing, attempt: attempt)
    }

    /// The result as JSON bytes.
    public func encodedJSON() -> [UInt8] {
        var w = JSONWriter(capacity: 512 + (payload?.utf8.count ?? 0))
        w.beginObject()
        w.key("version"); w.integer(Int64(version))
        w.key("request_id"); w.string(requestID)
        w.key("program"); w.string(orNull: program)
        w.key("issuer"); w.string(orNull: issuer?.rawValue)
        w.key("wallet"); w.string(orNull: wallet?.rawValue)
        w.key("kind"); w.string(orNull: kind?.rawValue)
        w.key("status"); w.string(status.rawValue)
        w.key("final"); w.bool(isFinal)
        w.key("code"); w.string(orNull: code?.rawValue)
        w.key("message"); w.string(message)
        w.key("next_action"); w.string(nextAction.rawValue)
        w.key("issuer_code"); w.string(orNull: issuerCode)
        w.key("http_status"); w.integer(orNull: httpStatus.map(Int64.init))
        w.key("payload"); w.string(orNull: payload)
        w.key("payment")
        if let payment { Self.write(payment, to: &w) } else { w.null() }
        w.key("timing")
        w.beginObject()
        w.key("window_start"); w.timestamp(orNull: timing.windowStartMs)
        w.key("deadline"); w.timestamp(orNull: timing.deadlineMs)
        w.key("received_at"); w.timestamp(orNull: timing.receivedAtMs)
        w.key("issuer_ms"); w.integer(orNull: timing.issuerMs)
        w.key("published_at"); w.timestamp(orNull: timing.publishedAtMs)
        w.endObject()
        w.key("attempt"); w.integer(Int64(attempt))
        w.endObject()
        return w.bytes
    }

    /// Writes the payment object. It never holds the action links: they are capabilities and
    /// reach the requester only sealed in `payload` (`PaymentLinks.plaintextJSON()`).
    private static func write(_ payment: PaymentResult, to w: inout JSONWriter) {
        w.beginObject()
        w.key("outcome"); w.string(payment.outcome)
        w.key("refusal_code"); w.string(orNull: payment.refusalCode)
        w.key("refusal_description"); w.string(orNull: payment.refusalDescription)
        w.key("payment_instrument")
        if let instrument = payment.paymentInstrument {
            w.beginObject()
            w.key("type"); w.string(orNull: instrument.type)
            w.key("card_brand"); w.string(orNull: instrument.cardBrand)
            w.key("card_bin"); w.string(orNull: instrument.cardBin)
            w.key("last_four"); w.string(orNull: instrument.lastFour)
            w.key("expiry_month"); w.integer(orNull: instrument.expiryMonth.map(Int64.init))
            w.key("expiry_year"); w.integer(orNull: instrument.expiryYear.map(Int64.init))
            w.key("funding_type"); w.string(orNull: instrument.fundingType)
            w.key("category"); w.string(orNull: instrument.category)
            w.key("country_code"); w.string(orNull: instrument.countryCode)
            w.key("issuer_name"); w.string(orNull: instrument.issuerName)
            w.endObject()
        } else {
            w.null()
        }
        w.endObject()
    }

    /// Reads a result written by `encodedJSON()` (tests and tools). Unknown members are ignored.
    public static func decode(_ bytes: [UInt8]) throws(ContractDecodingError) -> ProvisioningResult {
        try FieldReader.decodeObject(bytes, what: "a result is a JSON object", decode)
    }

    private static func decode(_ r: FieldReader) throws(FieldError) -> ProvisioningResult {
        func known<T: RawRepresentable>(_ key: String, _ reader: FieldReader = r, as type: T.Type) throws(FieldError) -> T?
        where T.RawValue == String {
            guard let text = try reader.string(key) else { return nil }
            guard let value = T(rawValue: text) else { throw .invalid(reader.fieldPath(key), "has an unknown value") }
            return value
        }
        guard let status = try known("status", as: ResultStatus.self) else { throw .missing("status", "string") }
        guard let nextAction = try known("next_action", as: NextAction.self) else { throw .missing("next_action", "string") }
        guard let isFinal = try r.bool("final") else { throw .missing("final", "boolean") }
        var timing = ResultTiming()
        if let t = try r.object("timing") {
            timing = ResultTiming(windowStartMs: try t.timestamp("window_start"), deadlineMs: try t.timestamp("deadline"),
                                  receivedAtMs: try t.timestamp("received_at"), issuerMs: try t.integer("issuer_ms"),
                                  publishedAtMs: try t.timestamp("published_at"))
        }
        var payment: PaymentResult?
        if let p = try r.object("payment") {
            var instrument: MaskedPaymentInstrument?
            if let i = try p.object("payment_instrument") {
                instrument = MaskedPaymentInstrument(
                    type: try i.string("type"), cardBrand: try i.string("card_brand"), cardBin: try i.string("card_bin"),
                    lastFour: try i.string("last_four"), expiryMonth: try i.integer("expiry_month").map { Int($0) },
                    expiryYear: try i.integer("expiry_year").map { Int($0) }, fundingType: try i.string("funding_type"),
                    category: try i.string("category"), countryCode: try i.string("country_code"),
                    issuerName: try i.string("issuer_name"))
            }
            payment = PaymentResult(outcome: try p.requiredString("outcome"), refusalCode: try p.string("refusal_code"),
                                    refusalDescription: try p.string("refusal_description"),
                                    paymentInstrument: instrument)
        }
        return ProvisioningResult(
            version: Int(try r.requiredInteger("version")), requestID: try r.requiredString("request_id"),
            program: try r.string("program"), issuer: try known("issuer", as: IssuerKind.self),
            wallet: try known("wallet", as: Wallet.self), kind: try known("kind", as: RequestKind.self),
            status: status, isFinal: isFinal, code: try known("code", as: ErrorCode.self),
            message: try r.string("message") ?? "", nextAction: nextAction, issuerCode: try r.string("issuer_code"),
            httpStatus: try r.integer("http_status").map { Int($0) }, payload: try r.string("payload"),
            payment: payment, timing: timing, attempt: Int(try r.integer("attempt") ?? 1))
    }
}

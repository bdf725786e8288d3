/// One audit event on `provisioning.audit` (CONTRACT section 5, plus `operator` for replays and a
/// short `reason`).
///
/// No field can hold a `Sensitive` or arbitrary text: enums and numbers for the facts,
/// `Pseudonym` for card and device, `CardLast4` for the digits, `AuditReason` for the reason, and
/// the identifier fields (`request_id`, `program`, `worker`, `operator`) restricted to 1–64 of
/// `[A-Za-z0-9._:@-]`: anything else is stored as `invalid`, so free text, JSON, base64 padding and
/// certificates cannot pass.
public struct AuditEvent: Sendable, Hashable {
    /// Unique id of this event.
    public let eventID: AuditEventID
    /// The request's id (absent for undecodable dead letters).
    public let requestID: String?
    /// The stage.
    public let stage: AuditStage
    /// When it happened (epoch ms; written as RFC 3339).
    public let atMs: Int64
    /// The program.
    public let program: String?
    /// The issuer.
    public let issuer: IssuerKind?
    /// The wallet.
    public let wallet: Wallet?
    /// The result status.
    public let status: ResultStatus?
    /// The normalized code.
    public let code: ErrorCode?
    /// The issuer's HTTP status.
    public let httpStatus: Int?
    /// Latency of the stage (ms).
    public let latencyMs: Int64?
    /// Attempt number.
    public let attempt: Int?
    /// Kafka partition of the request.
    public let partition: Int32?
    /// Kafka offset of the request.
    public let offset: Int64?
    /// The worker instance.
    public let worker: String?
    /// Pseudonym of the card id.
    public let cardRef: Pseudonym?
    /// Pseudonym of the device.
    public let deviceRef: Pseudonym?
    /// Last four card digits.
    public let last4: CardLast4?
    /// The operator who replayed a dead letter.
    public let `operator`: String?
    /// Short redacted reason.
    public let reason: AuditReason?

    /// The text stored in place of an identifier that breaks the allowed alphabet.
    public static let invalidIdentifier = "invalid"

    /// Creates an event; identifier fields outside `[A-Za-z0-9._:@-]{1,64}` become `invalid`.
    public init(eventID: AuditEventID = .random(), requestID: String?, stage: AuditStage, atMs: Int64,
                program: String? = nil, issuer: IssuerKind? = nil, wallet: Wallet? = nil, status: ResultStatus? = nil,
                code: ErrorCode? = nil, httpStatus: Int? = nil, latencyMs: Int64? = nil, attempt: Int? = nil,
                partition: Int32? = nil, offset: Int64? = nil, worker: String? = nil, cardRef: Pseudonym? = nil,
                deviceRef: Pseudonym? = nil, last4: CardLast4? = nil, operator: String? = nil, reason: AuditReason? = nil) {
        self.eventID = eventID
        self.requestID = requestID.map(Self.safeIdentifier)
        self.stage = stage
        self.atMs = atMs
        self.program = program.map(Self.safeIdentifier)
        self.issuer = issuer
        self.wallet = wallet
        self.status = status
        self.code = code
        self.httpStatus = httpStatus
        self.latencyMs = latencyMs
        self.attempt = attempt
        self.partition = partition
        self.offset = offset
        self.worker = worker.map(Self.safeIdentifier)
        self.cardRef = cardRef
        self.deviceRef = deviceRef
        self.last4 = last4
        self.operator = `operator`.map(Self.safeIdentifier)
        self.reason = reason
    }

    /// The identifier unchanged when it is 1–64 of `[A-Za-z0-9._:@-]`, else `invalid`.
    public static func safeIdentifier(_ text: String) -> String {
        let utf8 = text.utf8
        let ok = !utf8.isEmpty && utf8.count <= 64
            && utf8.allSatisfy { Identifier.isTokenByte($0) || $0 == UInt8(ascii: "@") }
        return ok ? text : invalidIdentifier
    }

    /// The event as JSON bytes; every key is written, `null` where absent, except `card_ref_previous`
    /// and `device_ref_previous`, written only during a pseudonym key rotation.
    public func encodedJSON() -> [UInt8] {
        var w = JSONWriter(capacity: 512)
        w.beginObject()
        w.key("event_id"); w.string(eventID.hex)
        w.key("request_id"); w.string(orNull: requestID)
        w.key("stage"); w.string(stage.rawValue)
        w.key("at"); w.timestamp(milliseconds: atMs)
        w.key("program"); w.string(orNull: program)
        w.key("issuer"); w.string(orNull: issuer?.rawValue)
        w.key("wallet"); w.string(orNull: wallet?.rawValue)
        w.key("status"); w.string(orNull: status?.rawValue)
        w.key("code"); w.string(orNull: code?.rawValue)
        w.key("http_status"); w.integer(orNull: httpStatus.map(Int64.init))
        w.key("latency_ms"); w.integer(orNull: latencyMs)
        w.key("attempt"); w.integer(orNull: attempt.map(Int64.init))
        w.key("partition"); w.integer(orNull: partition.map(Int64.init))
        w.key("offset"); w.integer(orNull: offset)
        w.key("worker"); w.string(orNull: worker)
        w.key("card_ref"); w.string(orNull: cardRef?.text)
        w.key("device_ref"); w.string(orNull: deviceRef?.text)
        w.key("last4"); w.string(orNull: last4?.digits)
        w.key("operator"); w.string(orNull: `operator`)
        w.key("reason"); w.string(orNull: reason?.text)
        // Written only during a pseudonym key rotation, so events from before it keep their shape.
        if let previous = cardRef?.previous { w.key("card_ref_previous"); w.string(previous) }
        if let previous = deviceRef?.previous { w.key("device_ref_previous"); w.string(previous) }
        w.endObject()
        return w.bytes
    }

    /// Reads an event written by `encodedJSON()`. Unknown members are ignored.
    public static func decode(_ bytes: [UInt8]) throws(ContractDecodingError) -> AuditEvent {
        try FieldReader.decodeObject(bytes, what: "an audit event is a JSON object", decode)
    }

    private static func decode(_ r: FieldReader) throws(FieldError) -> AuditEvent {
        func known<T: RawRepresentable>(_ key: String, as type: T.Type) throws(FieldError) -> T? where T.RawValue == String {
            guard let text = try r.string(key) else { return nil }
            guard let value = T(rawValue: text) else { throw .invalid(key, "has an unknown value") }
            return value
        }
        func checked<T>(_ key: String, _ make: (String) -> T?) throws(FieldError) -> T? {
            guard let text = try r.string(key) else { return nil }
            guard let value = make(text) else { throw .invalid(key, "is malformed") }
            return value
        }
        func pseudonym(_ key: String) throws(FieldError) -> Pseudonym? {
            guard let text = try r.string(key) else { return nil }
            let previous = try r.string(key + "_previous")
            guard let value = Pseudonym(text: text, previous: previous) else { throw .invalid(key, "is malformed") }
            return value
        }
        guard let eventID = try checked("event_id", AuditEventID.init(hex:)) else { throw .missing("event_id", "string") }
        guard let stage = try known("stage", as: AuditStage.self) else { throw .missing("stage", "string") }
        guard let atMs = try r.timestamp("at") else { throw .missing("at", "string") }
        return AuditEvent(
            eventID: eventID, requestID: try r.string("request_id"), stage: stage, atMs: atMs,
            program: try r.string("program"), issuer: try known("issuer", as: IssuerKind.self),
            wallet: try known("wallet", as: Wallet.self), status: try known("status", as: ResultStatus.self),
            code: try known("code", as: ErrorCode.self), httpStatus: try r.integer("http_status").map { Int($0) },
            latencyMs: try r.integer("latency_ms"), attempt: try r.integer("attempt").map { Int($0) },
            partition: try r.integer("partition").map { Int32(truncatingIfNeeded: $0) }, offset: try r.integer("offset"),
            worker: try r.string("worker"), cardRef: try pseudonym("card_ref"),
            deviceRef: try pseudonym("device_ref"), last4: try checked("last4", CardLast4.init),
            operator: try r.string("operator"), reason: try r.string("reason").map(AuditReason.init(decoded:)))
    }
}

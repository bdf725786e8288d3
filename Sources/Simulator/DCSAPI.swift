import Contract
import HTTP

/// DCS wallet binding (`/dcs`): Apple (`/card/v1/apple-bind-wallet`) and Google V2 / V1
/// (`/card/v2/google-bind-wallet`, `/card/v1/google-bind-wallet`), signed `X-DAPI-*` headers and
/// the `{code, message, messageDetail, data}` envelope.
///
/// Magic suffixes come from the card identifier when it carries one (V2 `cardId`), otherwise from
/// `externalUserId` (the only free-form identifier of the V1 endpoints, whose `cardMantissa` is four
/// digits).
struct DCSAPI {
    let engine: SimulatorEngine

    /// The timestamp window, both ways.
    static let timestampWindowMs: Int64 = 5_000

    private enum Endpoint {
        case apple, googleV2, googleV1
    }

    func route(_ request: HTTPServerRequest, _ path: [String], _ responder: HTTPResponder) {
        let endpoint: Endpoint
        switch path {
        case ["card", "v1", "apple-bind-wallet"]: endpoint = .apple
        case ["card", "v2", "google-bind-wallet"]: endpoint = .googleV2
        case ["card", "v1", "google-bind-wallet"]: endpoint = .googleV1
        default: return SimulatorEngine.notFound(responder)
        }
        guard request.method == "POST" else { return SimulatorEngine.methodNotAllowed("POST", responder) }
        bind(request, endpoint, responder)
    }

    static func envelope(_ status: Int, _ code: String, _ message: String, detail: String? = nil, data: JSONValue = .null,
                         headers: [HTTPHeader] = []) -> HTTPServerResponse {
        SimulatorEngine.json(status, .object(["code": .string(code), "message": .string(message),
                                              "messageDetail": detail.map(JSONValue.string) ?? .null, "data": data]),
                             headers: headers)
    }

    private func bind(_ request: HTTPServerRequest, _ endpoint: Endpoint, _ responder: HTTPResponder) {
        let lenient = BodyReader.lenient(request.body)
        let userID = lenient?["externalUserId"]?.stringValue ?? ""
        let cardIdentifier = endpoint == .googleV2 ? (lenient?["cardId"]?.stringValue ?? "") : userID
        let reference = endpoint == .apple
            ? lenient?["appleNonce"]?.stringValue.map(HandshakeReference.apple(nonce:)) ?? ""
            : HandshakeReference.google(walletID: lenient?["clientCustomerId"]?.stringValue ?? "",
                                        deviceID: lenient?["deviceId"]?.stringValue ?? "", serverSessionID: nil)
        engine.record(.dcs, cardID: cardIdentifier) { reference }
        var magic = MagicBehaviour(identifier: cardIdentifier)
        if magic == .none { magic = MagicBehaviour(identifier: userID) }
        let early = engine.delay(for: magic, issuer: .dcs)

        let program: SimulatorProgram
        switch authenticate(request) {
        case .success(let authenticated): program = authenticated
        case .failure(let failure):
            return engine.send(Self.envelope(401, failure.field, failure.message), after: early, responder)
        }

        var call = ProvisioningCall(card: CardKey(issuer: .dcs, program: program.name, cardID: ""), magic: magic,
                                    wallet: endpoint == .apple ? Wallet.applePay.rawValue : Wallet.googleWallet.rawValue,
                                    deviceRef: "", deviceIneligible: false, nonce: nil, handshake: reference)
        var apple: ValidatedAppleHandshake?
        var last4 = ""
        do throws(FieldProblem) {
            let body = try BodyReader.required(lenient)
            let externalUserID = try body.requiredString("externalUserId")
            var mantissa: String?
            if endpoint != .googleV2 {
                mantissa = try body.optionalString("cardMantissa")
                if let mantissa, mantissa.utf8.count != 4 || !mantissa.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                    throw FieldProblem(field: "cardMantissa", message: "cardMantissa must be the last 4 digits of the PAN")
                }
            }
            switch endpoint {
            case .apple:
                let handshake = try engine.validateApple(certificates: try body.requiredStringArray("applePublicCertificates"),
                                                         nonce: try body.requiredString("appleNonce"),
                                                         nonceSignature: try body.requiredString("appleNonceSignature"),
                                                         names: ("applePublicCertificates", "appleNonce", "appleNonceSignature"))
                apple = handshake
                call.deviceRef = handshake.leaf.deviceRef
                call.deviceIneligible = handshake.leaf.commonName.hasSuffix("-ineligible")
                call.nonce = handshake.nonceDigest
                call.card = CardKey(issuer: .dcs, program: program.name, cardID: "user:\(externalUserID)/\(mantissa ?? "")")
                last4 = mantissa ?? PayloadFactory.last4(cardID: externalUserID)
            case .googleV2, .googleV1:
                let walletID = try lengthChecked(body, "clientCustomerId", 2...36)
                let deviceID = try lengthChecked(body, "deviceId", 2...24)
                if endpoint == .googleV2 {
                    let cardID = try body.requiredString("cardId")
                    call.card = CardKey(issuer: .dcs, program: program.name, cardID: cardID)
                    last4 = PayloadFactory.last4(cardID: cardID)
                } else {
                    call.card = CardKey(issuer: .dcs, program: program.name, cardID: "user:\(externalUserID)/\(mantissa ?? "")")
                    last4 = mantissa ?? PayloadFactory.last4(cardID: externalUserID)
                }
                call.deviceRef = SimulatorEngine.googleDeviceRef(deviceID ?? walletID ?? "")
                call.deviceIneligible = deviceID?.hasSuffix("-ineligible") == true || walletID?.hasSuffix("-ineligible") == true
            }
        } catch {
            return engine.send(Self.envelope(200, "PARAM_ERROR", "parameter error", detail: error.message), after: early, responder)
        }

        let (outcome, delayMs, reuse, nowMs) = engine.decide(call)
        let vCardID = PayloadFactory.vCardID(program: program.name, cardID: call.card.cardID)
        let response: HTTPServerResponse
        switch outcome {
        case .success:
            if let apple {
                guard let values = try? engine.payloads.apple(apple, issuer: .dcs, cardID: call.card.cardID, last4: last4, nowMs: nowMs,
                                                              ephemeralKeyReuse: reuse)
                else {
                    response = Self.envelope(200, "SYS_ERROR", "system error", detail: "the simulator could not encrypt the pass data")
                    break
                }
                response = Self.envelope(200, "SYS_SUCCESS", "", data: .object([
                    "encryptedPassData": .string(values.encryptedPassData),
                    "activationData": .string(values.activationData),
                    "ephemeralPublicKey": .string(values.ephemeralPublicKey),
                    "vCardID": .string(vCardID),
                ]))
            } else {
                response = Self.envelope(200, "SYS_SUCCESS", "", data: .object([
                    "last4": .string(last4),
                    "opaquePaymentCard": .string(engine.payloads.opaquePaymentCard(issuer: .dcs)),
                    "vCardID": .string(vCardID),
                ]))
            }
        case .cardNotFound:
            response = Self.envelope(200, "CARD_NOT_FOUND", "card not found", detail: "check cardId / externalUserId")
        case .cardNotActive:
            response = Self.envelope(200, "CARD_STATUS_INVALID", "card status invalid",
                                     detail: "the card must be activated, not frozen and not canceled")
        case .alreadyProvisioned:
            response = Self.envelope(200, "WALLET_ALREADY_BOUND", "the card is already bound to this wallet on this device")
        case .deviceIneligible:
            response = Self.envelope(200, "DEVICE_NOT_ELIGIBLE", "the device is not eligible for this card")
        case .nonceUsed:
            response = Self.envelope(200, "NONCE_USED", "the Apple nonce was already used", detail: "start a new PassKit flow")
        case .unavailable:
            response = Self.envelope(503, "SYS_ERROR", "service unavailable, retry later")
        case .rateLimited(let seconds):
            response = Self.envelope(429, "SYS_BUSY", "system busy, retry after \(seconds) s", headers: SimulatorEngine.retryAfter(seconds))
        case .gatewayTimeout, .hang:
            response = SimulatorEngine.gatewayTimeout
        }
        engine.send(response, after: delayMs, responder)
    }

    private func lengthChecked(_ body: BodyReader, _ name: String, _ range: ClosedRange<Int>) throws(FieldProblem) -> String? {
        guard let value = try body.optionalString(name) else { return nil }
        guard range.contains(value.unicodeScalars.count) else {
            throw FieldProblem(field: name, message: "\(name) must be \(range.lowerBound)-\(range.upperBound) characters")
        }
        return value
    }

    /// Checks the `X-DAPI-*` headers; the failure's `field` holds the envelope code.
    private func authenticate(_ request: HTTPServerRequest) -> Result<SimulatorProgram, FieldProblem> {
        guard let apiKey = request.header("X-DAPI-API-KEY"), let timestamp = request.header("X-DAPI-TIMESTAMP"),
              let nonce = request.header("X-DAPI-NONCE"), let signature = request.header("X-DAPI-SIGN")
        else {
            return .failure(FieldProblem(field: "AUTH_FAILED", message: "send X-DAPI-API-KEY, X-DAPI-TIMESTAMP, X-DAPI-NONCE and X-DAPI-SIGN"))
        }
        guard let program = engine.state.withLock({ $0.program(issuer: .dcs, apiKey: apiKey) }), let secret = program.apiSecret else {
            return .failure(FieldProblem(field: "AUTH_FAILED", message: "unknown X-DAPI-API-KEY"))
        }
        let nowMs = SimulatorEngine.nowMs()
        guard let timestampMs = Int64(timestamp) else {
            return .failure(FieldProblem(field: "TIMESTAMP_EXPIRED", message: "X-DAPI-TIMESTAMP must be epoch milliseconds"))
        }
        // Saturating and `magnitude`: `abs(nowMs - Int64.min)` would trap.
        guard nowMs.clampedSubtracting(timestampMs).magnitude <= Self.timestampWindowMs.magnitude else {
            return .failure(FieldProblem(field: "TIMESTAMP_EXPIRED", message: "X-DAPI-TIMESTAMP is more than 5 s from the server clock"))
        }
        guard !nonce.isEmpty, nonce.utf8.count <= 128 else {
            return .failure(FieldProblem(field: "AUTH_FAILED", message: "X-DAPI-NONCE must be 1-128 characters"))
        }
        let expected = DCSSignature.sign(secret: secret.revealed, apiKey: apiKey, timestamp: timestamp, nonce: nonce, body: request.body)
        guard Crypto.constantTimeEquals(Array(expected.utf8), Array(signature.utf8)) else {
            return .failure(FieldProblem(field: "SIGN_INVALID", message: "X-DAPI-SIGN does not match the request"))
        }
        let fresh = engine.state.withLock {
            $0.recordRequestNonce(nonce, timestampMs: timestampMs, windowMs: Self.timestampWindowMs, nowMs: nowMs)
        }
        guard fresh else {
            return .failure(FieldProblem(field: "AUTH_FAILED", message: "X-DAPI-NONCE was already used; send a fresh nonce per request"))
        }
        return .success(program)
    }
}

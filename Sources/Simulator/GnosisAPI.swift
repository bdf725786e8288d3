import Contract
import HTTP

/// Gnosis Pay Apple Pay in-app provisioning (`/gnosis`): `POST /api/v1/cards/{id}/apple-pay/provision`
/// with a bearer token and `{"code","message"}` errors.
struct GnosisAPI {
    let engine: SimulatorEngine

    func route(_ request: HTTPServerRequest, _ path: [String], _ responder: HTTPResponder) {
        guard path.count == 6, path[0] == "api", path[1] == "v1", path[2] == "cards", path[4] == "apple-pay", path[5] == "provision" else {
            return SimulatorEngine.notFound(responder)
        }
        guard request.method == "POST" else { return SimulatorEngine.methodNotAllowed("POST", responder) }
        provision(request, cardID: path[3], responder)
    }

    static func error(_ status: Int, _ code: String, _ message: String, headers: [HTTPHeader] = []) -> HTTPServerResponse {
        SimulatorEngine.json(status, .object(["code": .string(code), "message": .string(message)]), headers: headers)
    }

    private func provision(_ request: HTTPServerRequest, cardID: String, _ responder: HTTPResponder) {
        let parsed = BodyReader.lenient(request.body)
        let reference = parsed?["nonce"]?.stringValue.map(HandshakeReference.apple(nonce:)) ?? ""
        engine.record(.gnosis, cardID: cardID) { reference }
        let magic = MagicBehaviour(identifier: cardID)
        let early = engine.delay(for: magic, issuer: .gnosis)
        guard let program = engine.bearerProgram(.gnosis, request) else {
            return engine.send(Self.error(401, "unauthorized", "missing or invalid bearer token"), after: early, responder)
        }
        let handshake: ValidatedAppleHandshake
        do throws(FieldProblem) {
            let body = try BodyReader.required(parsed)
            handshake = try engine.validateApple(certificates: try body.requiredStringArray("certificates"),
                                                 nonce: try body.requiredString("nonce"),
                                                 nonceSignature: try body.requiredString("nonce_signature"),
                                                 names: ("certificates", "nonce", "nonce_signature"))
            let deviceType = try body.requiredString("device_type")
            guard deviceType == "iphone" || deviceType == "apple_watch" else {
                throw FieldProblem(field: "device_type", message: "device_type must be iphone or apple_watch")
            }
            _ = try body.requiredString("app_version")
            _ = try body.optionalString("product_type")
        } catch {
            return engine.send(Self.error(400, "invalid_request", error.message), after: early, responder)
        }
        let call = ProvisioningCall(card: CardKey(issuer: .gnosis, program: program.name, cardID: cardID), magic: magic,
                                    wallet: Wallet.applePay.rawValue, deviceRef: handshake.leaf.deviceRef,
                                    deviceIneligible: handshake.leaf.commonName.hasSuffix("-ineligible"), nonce: handshake.nonceDigest,
                                    handshake: reference)
        let (outcome, delayMs, reuse, nowMs) = engine.decide(call)
        let response: HTTPServerResponse
        switch outcome {
        case .success:
            if let values = try? engine.payloads.apple(handshake, issuer: .gnosis, cardID: cardID, last4: PayloadFactory.last4(cardID: cardID),
                                                       nowMs: nowMs, ephemeralKeyReuse: reuse) {
                response = SimulatorEngine.json(200, .object([
                    "activation_data": .string(values.activationData),
                    "encrypted_pass_data": .string(values.encryptedPassData),
                    "ephemeral_public_key": .string(values.ephemeralPublicKey),
                ]))
            } else {
                response = Self.error(500, "internal_error", "the simulator could not encrypt the pass data")
            }
        case .cardNotFound:
            response = Self.error(404, "card_not_found", "card \(cardID) not found")
        case .cardNotActive:
            response = Self.error(422, "card_not_active", "card \(cardID) is not active")
        case .alreadyProvisioned:
            response = Self.error(409, "already_provisioned", "the card is already in Apple Wallet on this device")
        case .deviceIneligible:
            response = Self.error(422, "device_ineligible", "this device cannot accept this card")
        case .nonceUsed:
            response = Self.error(400, "invalid_request", "the PassKit nonce was already used; start a new PassKit flow")
        case .unavailable:
            response = Self.error(503, "service_unavailable", "the service is temporarily unavailable; retry later")
        case .rateLimited(let seconds):
            response = Self.error(429, "rate_limited", "too many requests; retry after \(seconds) s", headers: SimulatorEngine.retryAfter(seconds))
        case .gatewayTimeout, .hang:
            response = SimulatorEngine.gatewayTimeout
        }
        engine.send(response, after: delayMs, responder)
    }
}

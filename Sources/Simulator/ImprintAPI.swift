import Contract
import HTTP

/// Imprint "Add to Wallet" (`/imprint`): provisioning for the three wallets and the wallet-token
/// state query, with Imprint's `{"error":{"code","message"}}` envelope.
struct ImprintAPI {
    let engine: SimulatorEngine

    func route(_ request: HTTPServerRequest, _ path: [String], _ responder: HTTPResponder) {
        guard path.count >= 4, path[0] == "v2", path[1] == "payment_methods" else {
            return SimulatorEngine.notFound(responder)
        }
        let cardID = path[2]
        if path.count == 5, path[3] == "provision" {
            guard request.method == "POST" else { return SimulatorEngine.methodNotAllowed("POST", responder) }
            provision(request, cardID: cardID, walletName: path[4], responder)
        } else if path.count == 4, path[3] == "wallet_tokens" {
            guard request.method == "GET" else { return SimulatorEngine.methodNotAllowed("GET", responder) }
            walletTokens(request, cardID: cardID, responder)
        } else {
            SimulatorEngine.notFound(responder)
        }
    }

    static func error(_ status: Int, _ code: String, _ message: String, headers: [HTTPHeader] = []) -> HTTPServerResponse {
        SimulatorEngine.json(status, .object(["error": .object(["code": .string(code), "message": .string(message)])]),
                             headers: headers)
    }

    private static func handshake(_ body: BodyReader?, wallet: String) -> String {
        guard let body else { return "" }
        if wallet == Wallet.applePay.rawValue {
            return body["nonce"]?.stringValue.map(SimulatorCall.appleHandshake(nonce:)) ?? ""
        }
        return SimulatorCall.googleHandshake(walletID: body["wallet_id"]?.stringValue ?? "",
                                             deviceID: body["device_id"]?.stringValue ?? "",
                                             serverSessionID: body["server_session_id"]?.stringValue)
    }

    private func provision(_ request: HTTPServerRequest, cardID: String, walletName: String, _ responder: HTTPResponder) {
        let parsed = BodyReader.lenient(request.body)
        let handshake = Self.handshake(parsed, wallet: walletName)
        engine.record(.imprint, cardID: cardID) { handshake }
        let magic = MagicBehaviour(identifier: cardID)
        guard let program = engine.bearerProgram(.imprint, request) else {
            return engine.send(Self.error(401, "unauthenticated", "missing or unknown API key; send Authorization: Bearer <key>"),
                               after: engine.delay(for: magic, issuer: .imprint), responder)
        }
        guard let wallet = Wallet(rawValue: walletName) else {
            return engine.send(Self.error(400, "wallet_unsupported", "wallet '\(walletName)' is not supported; use apple_pay, google_wallet or google_pay"),
                               after: engine.delay(for: magic, issuer: .imprint), responder)
        }
        let card = CardKey(issuer: .imprint, program: program.name, cardID: cardID)
        var call = ProvisioningCall(card: card, magic: magic, wallet: wallet.rawValue, deviceRef: "", deviceIneligible: false, nonce: nil,
                                    handshake: handshake)
        var apple: ValidatedAppleHandshake?
        var opcRequested = false
        do throws(FieldProblem) {
            let body = try BodyReader.required(parsed)
            switch wallet {
            case .applePay:
                let handshake = try engine.validateApple(certificates: try body.requiredStringArray("certificates"),
                                                         nonce: try body.requiredString("nonce"),
                                                         nonceSignature: try body.requiredString("nonce_signature"),
                                                         names: ("certificates", "nonce", "nonce_signature"))
                apple = handshake
                call.deviceRef = handshake.leaf.deviceRef
                call.deviceIneligible = handshake.leaf.commonName.hasSuffix("-ineligible")
                call.nonce = handshake.nonceDigest
            case .googleWallet, .googlePay:
                let walletID = try body.requiredString("wallet_id")
                let deviceID = try body.requiredString("device_id")
                if wallet == .googleWallet {
                    opcRequested = try body.optionalBool("google_opc_requested") ?? false
                    let session = try body.optionalString("server_session_id")
                    if opcRequested, session == nil || session?.allSatisfy(\.isWhitespace) == true {
                        throw FieldProblem(field: "server_session_id",
                                           message: "server_session_id is required when google_opc_requested is true")
                    }
                }
                call.deviceRef = SimulatorEngine.googleDeviceRef(deviceID)
                call.deviceIneligible = deviceID.hasSuffix("-ineligible") || walletID.hasSuffix("-ineligible")
            }
        } catch {
            return engine.send(Self.error(400, "invalid_request", error.message), after: engine.delay(for: magic, issuer: .imprint), responder)
        }
        let (outcome, delayMs, reuse, nowMs) = engine.decide(call)
        let response: HTTPServerResponse
        switch outcome {
        case .success:
            response = success(wallet: wallet, apple: apple, opcRequested: opcRequested, cardID: cardID, nowMs: nowMs, reuse: reuse)
        case .cardNotFound:
            response = Self.error(404, "payment_method_not_found", "payment method \(cardID) not found")
        case .cardNotActive:
            response = Self.error(422, "payment_method_not_active", "payment method \(cardID) is not ACTIVE; activate or unfreeze it first")
        case .alreadyProvisioned:
            response = Self.error(409, "already_provisioned", "this card is already in this wallet on this device")
        case .deviceIneligible:
            response = Self.error(422, "device_ineligible", "this device cannot accept this card")
        case .nonceUsed:
            response = Self.error(400, "invalid_request", "the PassKit nonce was already used; restart PKAddPaymentPassViewController for a fresh one")
        case .unavailable:
            response = Self.error(503, "service_unavailable", "the service is temporarily unavailable; retry later")
        case .rateLimited(let seconds):
            response = Self.error(429, "rate_limited", "too many requests; retry after \(seconds) s", headers: SimulatorEngine.retryAfter(seconds))
        case .gatewayTimeout, .hang:
            response = SimulatorEngine.gatewayTimeout
        }
        engine.send(response, after: delayMs, responder)
    }

    private func success(wallet: Wallet, apple: ValidatedAppleHandshake?, opcRequested: Bool, cardID: String, nowMs: Int64,
                         reuse: Int) -> HTTPServerResponse {
        switch wallet {
        case .applePay:
            guard let apple,
                  let values = try? engine.payloads.apple(apple, issuer: .imprint, cardID: cardID, last4: PayloadFactory.last4(cardID: cardID),
                                                          nowMs: nowMs, ephemeralKeyReuse: reuse)
            else { return Self.error(500, "internal_error", "the simulator could not encrypt the pass data") }
            return SimulatorEngine.json(200, .object([
                "wallet": .string("apple_pay"),
                "provisioning_payload": .object([
                    "activation_data": .string(values.activationData),
                    "encrypted_pass_data": .string(values.encryptedPassData),
                    "ephemeral_public_key": .string(values.ephemeralPublicKey),
                ]),
            ]))
        case .googleWallet:
            var payload: [String: JSONValue] = ["opaque_payment_card": .string(engine.payloads.opaquePaymentCard(issuer: .imprint))]
            if opcRequested { payload["google_provisioning_payload"] = .string(engine.payloads.googleProvisioningPayload()) }
            return SimulatorEngine.json(200, .object(["provisioning_payload": .object(payload)]))
        case .googlePay:
            return SimulatorEngine.json(200, .object([
                "wallet": .string("google_pay"),
                "provisioning_payload": .object([
                    "opaque_payment_card": .string(engine.payloads.opaquePaymentCard(issuer: .imprint)),
                    "network": .string("VISA"),
                    "wallet_type": .string("GOOGLE_PAY"),
                ]),
            ]))
        }
    }

    private func walletTokens(_ request: HTTPServerRequest, cardID: String, _ responder: HTTPResponder) {
        guard let program = engine.bearerProgram(.imprint, request) else {
            return responder.respond(Self.error(401, "unauthenticated", "missing or unknown API key; send Authorization: Bearer <key>"))
        }
        switch MagicBehaviour(identifier: cardID) {
        case .missing, .foreign:
            return responder.respond(Self.error(404, "payment_method_not_found", "payment method \(cardID) not found"))
        default:
            break
        }
        let tokens = engine.state.withLock { $0.walletTokens(for: CardKey(issuer: .imprint, program: program.name, cardID: cardID)) }
        let data: [JSONValue] = tokens.map { token in
            .object([
                "id": .string(token.id),
                "wallet": .string(token.wallet),
                "device_ref": .string(token.deviceRef),
                "status": .string("ACTIVE"),
                "created_at": .string(RFC3339.format(milliseconds: token.createdAtMs)),
                "handshake_ref": .string(token.handshake),
            ])
        }
        responder.respond(SimulatorEngine.json(200, .object(["data": .array(data)])))
    }
}

import Contract
import Observability
import Simulator
import Synchronization

/// Makes realistic requests: real PassKit certificate chains and nonces from simulated devices,
/// Google callback values, Apple Pay payment tokens, and a fresh `reply.jwk` per request.
///
/// PassKit chains recur in production (they are Apple's, fetched by the device), so by default a
/// device's chain is shared by all its handshakes; `rotateChainEvery` replaces a device's leaf
/// after that many Apple handshakes (now and then, like a certificate renewal), and 1 gives every
/// request a chain of its own (the worst case for the worker's chain cache).
public final class RequestFactory: Sendable {
    private let devices: [SimulatedDevice]
    private let counter = Atomic<Int>(0)
    private let appleHandshakes = Atomic<Int>(0)
    private let replyKeys: [ReplyPrivateKey]
    private let replyCurve: JWKCurve
    private let rotateChainEvery: Int?

    /// Creates a factory with `devices` simulated devices (certificate chains are made once each,
    /// then rotated every `rotateChainEvery` Apple handshakes when given) and, when
    /// `replyKeyPool` > 0, that many reply keys reused round-robin (benchmarks); else a fresh key
    /// per request. Reply keys are on `replyCurve` (P-256 by default, X25519 to measure that option).
    public init(devices: Int = 4, replyKeyPool: Int = 0, rotateChainEvery: Int? = nil, replyCurve: JWKCurve = .p256) throws {
        self.devices = try (0..<max(1, devices)).map { _ in try SimulatedDevice() }
        self.replyCurve = replyCurve
        self.replyKeys = try (0..<replyKeyPool).map { _ in try ReplyPrivateKey.generate(replyCurve) }
        self.rotateChainEvery = rotateChainEvery.map { max(1, $0) }
    }

    private func nextIndex() -> Int { counter.add(1, ordering: .relaxed).newValue }

    private func replyKey() throws -> ReplyPrivateKey {
        replyKeys.isEmpty ? try ReplyPrivateKey.generate(replyCurve) : replyKeys[nextIndex() % replyKeys.count]
    }

    /// A unique request id.
    public func requestID(_ prefix: String = "req") -> String {
        "\(prefix)-\(Timestamps.nowMs())-\(nextIndex())"
    }

    /// A provisioning request for `wallet` and card `cardID` of `program`. `deviceSuffix` is
    /// appended to the Google device id (`-ineligible`); `startedAtMs` defaults to now.
    public func provision(program: String, wallet: Wallet, cardID: String, requestID: String? = nil,
                          startedAtMs: Int64? = nil, deadlineMs: Int64? = nil, userID: String? = nil, last4: String = "4242",
                          opcRequested: Bool = true, deviceSuffix: String = "", deviceType: String = "iphone",
                          encrypt: Bool = true, omitStartedAt: Bool = false) throws -> GeneratedRequest {
        let id = requestID ?? self.requestID()
        let reply = encrypt ? try replyKey() : nil
        var leafKey: ECPrivateKey?
        var handshake: String?
        var object: [String: JSONValue] = [
            "version": .integer(1), "request_id": .string(id), "program": .string(program), "kind": .string("provision"),
            "wallet": .string(wallet.rawValue),
            // DCS identifies Apple cards by user and last four digits: one user per card keeps them apart.
            "card": .object(["id": .string(cardID), "last4": .string(last4), "user_id": .string(userID ?? "u_\(cardID)")]),
        ]
        // Without started_at the window starts at the record timestamp (when it was produced).
        if !omitStartedAt { object["started_at"] = .string(RFC3339.format(milliseconds: startedAtMs ?? Timestamps.nowMs())) }
        if let deadlineMs { object["deadline"] = .string(RFC3339.format(milliseconds: deadlineMs)) }
        if let reply { object["reply"] = .object(["jwk": try reply.recipient.jsonValue]) }
        switch wallet {
        case .applePay:
            let device = devices[nextIndex() % devices.count]
            let handshakes = appleHandshakes.add(1, ordering: .relaxed).newValue
            if let every = rotateChainEvery, every > 1, handshakes % every == 0 { try device.rotateLeaf() }
            let apple = try device.appleHandshake(freshLeaf: rotateChainEvery == 1)
            var fields = apple.requestFields
            fields["device_type"] = .string(deviceType)
            fields["app_version"] = .string("5.2.0")
            object["apple"] = .object(fields)
            leafKey = apple.leafPrivateKey
            handshake = apple.callHandshake
        case .googleWallet, .googlePay:
            let walletID = Crypto.hex(Crypto.randomBytes(8))
            let deviceID = Crypto.hex(Crypto.randomBytes(6)) + deviceSuffix
            var fields: [String: JSONValue] = ["wallet_id": .string(walletID), "device_id": .string(deviceID)]
            var sessionID: String?
            if wallet == .googleWallet {
                fields["google_opc_requested"] = .bool(opcRequested)
                if opcRequested {
                    sessionID = "sess-" + Crypto.hex(Crypto.randomBytes(12))
                    fields["server_session_id"] = .string(sessionID!)
                }
            }
            object["google"] = .object(fields)
            handshake = SimulatedGoogleHandshake(walletID: walletID, deviceID: deviceID, googleOPCRequested: opcRequested,
                                                 serverSessionID: sessionID).callHandshake
        }
        return GeneratedRequest(requestID: id, program: program, kind: .provision, wallet: wallet, key: Array(cardID.utf8),
                                value: JSONWriter.encode(.object(object)), replyKey: reply, appleLeafKey: leafKey, handshake: handshake)
    }

    /// A Worldpay Apple Pay payment (`kind: payment`) for `transactionReference`.
    public func payment(program: String, transactionReference: String, amountMinorUnits: Int64 = 250, currency: String = "GBP",
                        requestID: String? = nil, startedAtMs: Int64? = nil, subscription: Bool = false) -> GeneratedRequest {
        let id = requestID ?? self.requestID("pay")
        var payment: [String: JSONValue] = [
            "transaction_reference": .string(transactionReference),
            "amount": .object(["currency": .string(currency), "value": .integer(amountMinorUnits)]),
            "wallet_token": .string(SimulatedDevice.applePayToken()),
            "narrative": .string("Provisioner demo"), "auto_settle": .bool(false),
        ]
        if subscription {
            payment["customer_agreement"] = .object(["type": .string("subscription"), "stored_card_usage": .string("first")])
        }
        var object: [String: JSONValue] = [
            "version": .integer(1), "request_id": .string(id), "program": .string(program), "kind": .string("payment"),
            "wallet": .string("apple_pay"), "card": .object(["id": .string("txn-" + transactionReference)]),
            "started_at": .string(RFC3339.format(milliseconds: startedAtMs ?? Timestamps.nowMs())),
            "payment": .object(payment),
        ]
        // The authorization's action links come back sealed to this key.
        let reply = try? replyKey()
        if let reply, let jwk = try? reply.recipient.jsonValue { object["reply"] = .object(["jwk": jwk]) }
        return GeneratedRequest(requestID: id, program: program, kind: .payment, wallet: .applePay,
                                key: Array(("txn-" + transactionReference).utf8), value: JSONWriter.encode(.object(object)), replyKey: reply)
    }

    /// A follow-up on an authorized payment (`kind: payment_action`) through one of its links.
    public func paymentAction(program: String, action: PaymentActionKind, link: String, transactionReference: String,
                              amountMinorUnits: Int64? = nil, currency: String = "GBP", requestID: String? = nil) -> GeneratedRequest {
        let id = requestID ?? self.requestID("act")
        var instruction: [String: JSONValue] = [
            "action": .string(action.rawValue), "link": .string(link), "transaction_reference": .string(transactionReference),
        ]
        if let amountMinorUnits {
            instruction["amount"] = .object(["currency": .string(currency), "value": .integer(amountMinorUnits)])
        }
        let object: [String: JSONValue] = [
            "version": .integer(1), "request_id": .string(id), "program": .string(program), "kind": .string("payment_action"),
            "wallet": .string("apple_pay"), "card": .object(["id": .string("txn-" + transactionReference)]),
            "started_at": .string(RFC3339.format(milliseconds: Timestamps.nowMs())),
            "payment_action": .object(instruction),
        ]
        return GeneratedRequest(requestID: id, program: program, kind: .paymentAction, wallet: .applePay,
                                key: Array(("txn-" + transactionReference).utf8), value: JSONWriter.encode(.object(object)))
    }
}

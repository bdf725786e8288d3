import Contract
import Kafka
import Pipeline
import Recovery
import Simulator

/// What the simulated backends send and how the workers are set up for it: four programs
/// (Imprint with a state query, DCS and Gnosis Pay without, Worldpay with its events query),
/// requests for Apple Pay, Google Wallet and Legacy Google Pay with fresh handshakes, Apple Pay
/// payments and their settle, partial settle or cancel, reply routes and a `traceparent`, signed
/// for the programs that sign, and the workers' configuration and secrets. The schedule (`SimulationRun`)
/// decides what is sent when; this is how each record is made.
enum SimWorkload {
    /// A request the workload produced, and what its finals are judged by.
    struct Sent {
        var requestID: String
        var program: String
        var card: String
        var wallet: Wallet
        /// `ReconcileQuery.deviceRef`'s form.
        var device: String
        /// The reply route its headers name (nil: the default results topic).
        var route: ReplyRoute?
        var handshake: String
        var producedAtMs: Int64
        var deadlineMs: Int64
        /// For a payment or a payment action: its transaction reference, and the action asked (nil for the payment).
        var payment: (reference: String, action: PaymentActionKind?)?
    }

    /// A provisioning request, keyed by card: Apple Pay from the simulated phone `device` (a nonce
    /// drawn from the schedule), or Google Wallet or Legacy Google Pay with wallet id `walletID`.
    /// Nil when the phone's certificates could not be made.
    static func request(id: String, program: String, card: String, device: String, wallet: Wallet, walletID: String, route: ReplyRoute?,
                        world: SimWorld) -> (request: ProvisioningRequest, message: KafkaOutgoingMessage)? {
        var value: [String: JSONValue] = [
            "version": .integer(1), "request_id": .string(id), "program": .string(program), "kind": .string("provision"),
            "card": .object(["id": .string(card), "last4": .string("4242"), "user_id": .string("u-\(card)")]),
            "started_at": .string(RFC3339.format(milliseconds: world.nowMs)),
        ]
        value["wallet"] = .string(wallet.rawValue)
        switch wallet {
        case .applePay:
            guard let phone = Self.phones[device] else { return nil }
            let nonce = (0..<16).map { _ in UInt8(world.int(0...255)) }
            let signature = (0..<70).map { _ in UInt8(world.int(0...255)) }
            value["apple"] = .object(["certificates": .array(phone.map { .string($0) }), "nonce": .string(Crypto.base64Encode(nonce)),
                                      "nonce_signature": .string(Crypto.base64Encode(signature)), "device_type": .string("iphone"),
                                      "app_version": .string("5.2.0")])
        case .googleWallet:
            value["google"] = .object(["wallet_id": .string(walletID), "device_id": .string(device), "google_opc_requested": .bool(false)])
        case .googlePay:
            value["google"] = .object(["wallet_id": .string(walletID), "device_id": .string(device)])
        }
        return message(value, id: id, key: card, route: route, world: world)
    }

    /// A Worldpay Apple Pay payment of `amount` pence with `reference` (its wallet token drawn from
    /// the schedule), keyed like the backends key payments (`txn-` and the reference).
    static func payment(id: String, program: String, reference: String, amount: Int64, route: ReplyRoute?,
                        world: SimWorld) -> (request: ProvisioningRequest, message: KafkaOutgoingMessage)? {
        func drawn(_ count: Int) -> String { Crypto.base64Encode((0..<count).map { _ in UInt8(world.int(0...255)) }) }
        let token: JSONValue = .object(["version": .string("EC_v1"), "data": .string(drawn(48)), "signature": .string(drawn(64)),
                                        "header": .object(["ephemeralPublicKey": .string(drawn(65)), "publicKeyHash": .string(drawn(32)),
                                                           "transactionId": .string("tx-\(reference)")])])
        let value: [String: JSONValue] = [
            "version": .integer(1), "request_id": .string(id), "program": .string(program), "kind": .string("payment"),
            "wallet": .string("apple_pay"), "card": .object(["id": .string("txn-" + reference)]),
            "started_at": .string(RFC3339.format(milliseconds: world.nowMs)),
            "payment": .object(["transaction_reference": .string(reference), "amount": .object(["currency": .string("GBP"), "value": .integer(amount)]),
                                "wallet_token": .string(String(decoding: JSONWriter.encode(token), as: UTF8.self)),
                                "narrative": .string("Simulated order"), "auto_settle": .bool(false)]),
        ]
        return message(value, id: id, key: "txn-" + reference, route: route, world: world)
    }

    /// A settle, partial settle (`amount` pence) or cancel of the payment with `reference`, through
    /// the link its authorization carried.
    static func paymentAction(id: String, program: String, action: PaymentActionKind, reference: String, amount: Int64?, route: ReplyRoute?,
                              world: SimWorld) -> (request: ProvisioningRequest, message: KafkaOutgoingMessage)? {
        var instruction: [String: JSONValue] = ["action": .string(action.rawValue), "link": .string(SimPayments.link(action, reference: reference)),
                                                "transaction_reference": .string(reference)]
        if let amount { instruction["amount"] = .object(["currency": .string("GBP"), "value": .integer(amount)]) }
        let value: [String: JSONValue] = [
            "version": .integer(1), "request_id": .string(id), "program": .string(program), "kind": .string("payment_action"),
            "wallet": .string("apple_pay"), "card": .object(["id": .string("txn-" + reference)]),
            "started_at": .string(RFC3339.format(milliseconds: world.nowMs)), "payment_action": .object(instruction),
        ]
        return message(value, id: id, key: "txn-" + reference, route: route, world: world)
    }

    /// The request `value` as its backend produces it: keyed by `key`, with a `traceparent` of its
    /// own and the reply route's headers. Nil when it does not decode.
    private static func message(_ value: [String: JSONValue], id: String, key: String, route: ReplyRoute?,
                                world: SimWorld) -> (request: ProvisioningRequest, message: KafkaOutgoingMessage)? {
        let bytes = JSONWriter.encode(.object(value))
        guard case .decoded(let request) = RequestDecoder.decode(bytes) else { return nil }
        var message = KafkaOutgoingMessage(topic: SimulationRun.topics.requests, key: Array(key.utf8), value: bytes, timestampMs: world.nowMs)
        message.headers.append(KafkaHeader(key: "traceparent", string: "00-\(Self.traceID(id))-\(Self.traceID(id).prefix(16))-01"))
        for header in route?.requestHeaders ?? [] { message.headers.append(KafkaHeader(key: header.name, value: header.value)) }
        return (request, message)
    }

    /// `message` signed for `partition` (v3) with its program's key, when the program signs.
    static func signed(_ message: KafkaOutgoingMessage, program: String, partition: Int32, settings: SimulationSettings,
                       nowMs: Int64) -> KafkaOutgoingMessage {
        let variable: String
        switch program {
        case "sim-gnosis": variable = "SIM_GNOSIS_SIGNING_KEY"
        case "sim-worldpay": variable = "SIM_WORLDPAY_SIGNING_KEY"
        case "sim-imprint" where settings.imprintSigned: variable = "SIM_IMPRINT_SIGNING_KEY"
        default: return message
        }
        var pinned = message
        pinned.partition = partition
        let key = Self.environment[variable] ?? ""
        return RequestSigner(secret: Sensitive(key)).signed(pinned, partitionCount: Int(settings.partitions), nowMs: nowMs)
    }

    /// The trace id of request `id`'s `traceparent`, as its backend would have started it.
    static func traceID(_ id: String) -> String {
        String(Crypto.hex(Crypto.sha256(utf8: "trace \(id)")).prefix(32))
    }

    /// Three simulated phones' PassKit certificates (leaf, intermediate; base64 DER), made once per
    /// process: real chains the workers verify. The nonce and its signature are the schedule's.
    static let phones: [String: [String]] = {
        var phones: [String: [String]] = [:]
        for index in 0..<3 {
            guard let handshake = try? SimulatedDevice(name: "a\(index)").appleHandshake() else { continue }
            phones["a\(index)"] = handshake.certificates
        }
        return phones
    }()

    /// The workers' secrets (environment).
    static let environment = ["PROVISIONER_AUDIT_KEY": "sim-audit-key-0123456789abcdef0123456789abcdef",
                              "SIM_IMPRINT_KEY": "imprint-key", "SIM_DCS_KEY": "dcs-key", "SIM_GNOSIS_KEY": "gnosis-key", "SIM_WORLDPAY_KEY": "worldpay-key",
                              "SIM_IMPRINT_SIGNING_KEY": "sim-imprint-signing-0123456789abcdef0123456789abcdef",
                              "SIM_GNOSIS_SIGNING_KEY": "sim-gnosis-signing-0123456789abcdef0123456789abcdef",
                              "SIM_WORLDPAY_SIGNING_KEY": "sim-worldpay-signing-0123456789abcdef0123456789abcdef", "SIM_DCS_SECRET": "dcs-secret-0123456789",
                              "SIM_REPLAY_KEY": replaySecret]
    private static let replaySecret = "sim-replay-key-0123456789abcdef0123456789abcdef"
    /// The operator's replay keys: the workers' one replay key (`dlq.replay_signing_secret_env`).
    static let replayKeys = ReplayKeyring(keys: [ReplayKeyring.Key(id: nil, secret: Sensitive(replaySecret))])

    /// A worker's configuration: four programs (Imprint with a state query, DCS and Gnosis Pay
    /// without, Worldpay signed), no payload encryption (the simulation checks decisions, not JWE), 20 s windows, short
    /// reconciliation tiers, and the seed's drain.
    static func configuration(workerID: String, group: String, settings: SimulationSettings) -> WorkerConfiguration {
        var configuration = WorkerConfiguration(workerID: workerID)
        configuration.kafka = ["bootstrap.servers": "simulated"]
        configuration.groupID = group
        configuration.httpListen = nil
        configuration.requireEncryption = false
        configuration.deadlines = DeadlinePolicy(googleWindowMs: SimulationRun.windowMs)
        configuration.reconcileTiersMs = [1_000, 3_000, 6_000]
        configuration.revokeDrainMs = settings.drainMs
        configuration.maxPending = settings.maxPending
        configuration.replaySigningSecret = .environment("SIM_REPLAY_KEY")
        configuration.shutdownDrainMs = 5_000
        configuration.duplicateHorizonMs = 10 * 60 * 1_000
        var imprint = ProgramConfiguration(name: "sim-imprint", issuer: .imprint, baseURL: "http://imprint.sim", apiKey: .environment("SIM_IMPRINT_KEY"))
        imprint.timeoutMs = 10_000
        var dcs = ProgramConfiguration(name: "sim-dcs", issuer: .dcs, baseURL: "http://dcs.sim", apiKey: .environment("SIM_DCS_KEY"))
        dcs.apiSecret = .environment("SIM_DCS_SECRET")
        dcs.timeoutMs = 10_000
        var gnosis = ProgramConfiguration(name: "sim-gnosis", issuer: .gnosis, baseURL: "http://gnosis.sim", apiKey: .environment("SIM_GNOSIS_KEY"))
        gnosis.timeoutMs = 10_000
        gnosis.requestSigningSecret = .environment("SIM_GNOSIS_SIGNING_KEY")
        if settings.imprintSigned { imprint.requestSigningSecret = .environment("SIM_IMPRINT_SIGNING_KEY") }
        var worldpay = ProgramConfiguration(name: "sim-worldpay", issuer: .worldpay, baseURL: SimPayments.base,
                                            apiKey: .environment("SIM_WORLDPAY_KEY"))
        worldpay.timeoutMs = 10_000
        worldpay.requestSigningSecret = .environment("SIM_WORLDPAY_SIGNING_KEY")
        configuration.programs = ["sim-imprint": imprint, "sim-dcs": dcs, "sim-gnosis": gnosis, "sim-worldpay": worldpay]
        configuration.replyTopics = [SimulationRun.replyTopic, "sim.reply.*"]
        return configuration
    }
}

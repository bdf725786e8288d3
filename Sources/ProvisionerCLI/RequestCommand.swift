import Contract
import Dispatch
import Foundation
import ProvisionerClient
import Synchronization

/// `provisioner request`: one provisioning request through `ProvisionerClient`, awaited on a reply
/// partition, its outcome printed (never a payload value: only what kind it is and its sizes).
enum RequestCommand: Command {
    static let name = "request"
    static let summary = "sends one request through the client library and prints its outcome"
    static let switchNames: Set<String> = ["json", "opc"]
    static let help = """
        usage: provisioner request --bootstrap B --reply-topic T --reply-partition N
                                   (--file REQUEST.json | --program P --card-id C --last4 NNNN WALLET-VALUES)
                                   [--key-file KEY.pem | --reply-curve p256|x25519] [--sign-env VAR [--key-id ID]] [--window-ms MS]
                                   [--request-id ID] [--json]

        Builds one request with the ProvisionerClient library (started_at = now, reply.jwk = the
        public half of the key), produces it keyed by card id with kafka_replyTopic,
        kafka_replyPartition and a fresh kafka_correlationId, awaits the answer on partition N of
        T (assigned by hand, positioned at its end before the send; the worker must allow T in
        results.reply_topics), decrypts the payload and prints the outcome. Payload values are
        never printed, only their kind and sizes. Exit 0 when an answer arrived (whatever its
        status), 1 when none arrived in the window or Kafka failed, 2 for bad arguments.

        wallet values:
          Apple Pay:      --certificates B64,B64 (leaf first, DER) --nonce B64 --nonce-signature B64
          Google Wallet:  --wallet-id W --device-id D [--opc] [--server-session-id S]
          Legacy Google:  --wallet google_pay --wallet-id W --device-id D
        --file REQUEST.json: the same values as a request document without reply/started_at:
          {"program", "request_id"?, "wallet", "card": {"id", "last4", "user_id"?},
           "apple": {"certificates", "nonce", "nonce_signature"} | "google": {"wallet_id", "device_id",
           "google_opc_requested"?, "server_session_id"?}}

        options:
          --key-file KEY.pem  the backend's private key (PKCS#8 PEM, P-256 or X25519); default: a new key for this run
          --reply-curve C     the curve of that new key: p256 (default) or x25519 (reply.jwk kty OKP)
          --sign-env VAR      sign v3 with the program's secret in environment variable VAR
          --key-id ID         that secret's id among the program's keys (request_signing.keys[].id)
          --window-ms MS      how long to wait (default: the wallet's window, 20 s Apple, 60 s Google)
          --topic T           requests topic (default provisioning.requests)
          --json              print one JSON object instead of a line
        """

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        let bootstrap = try arguments.requiredOption("bootstrap")
        let replyTopic = try arguments.requiredOption("reply-topic")
        let partition = try arguments.integer("reply-partition", default: -1, in: 0...Int(Int32.max))
        guard partition >= 0 else { throw UsageError("--reply-partition is required") }
        let json = arguments.flag("json")
        let request = try Self.request(&arguments)
        let keyFile = arguments.option("key-file")
        let curveName = arguments.option("reply-curve")
        let signVariable = arguments.option("sign-env")
        let keyID = arguments.option("key-id")
        let windowMs = try arguments.integer("window-ms", default: 0, in: 0...600_000)
        let requestsTopic = arguments.option("topic") ?? "provisioning.requests"
        try arguments.rejectUnknown()
        let curve: JWKCurve
        switch curveName {
        case nil, "p256"?: curve = .p256
        case "x25519"?: curve = .x25519
        default: throw UsageError("--reply-curve takes p256 or x25519")
        }
        guard keyFile == nil || curveName == nil else { throw UsageError("--reply-curve chooses a new key's curve; a --key-file has its own") }
        let key: ReplyPrivateKey
        do {
            if let keyFile {
                guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8) else { throw CommandFailure("cannot read \(keyFile)") }
                key = try ReplyPrivateKey(pem: pem)
            } else {
                key = try ReplyPrivateKey.generate(curve)
            }
        } catch let error as CryptoError {
            throw CommandFailure("the reply key is not usable: \(error.message)")
        }
        var secret: Sensitive?
        if let signVariable {
            guard let value = ProcessInfo.processInfo.environment[signVariable], !value.isEmpty else {
                throw CommandFailure("--sign-env names \(signVariable), which is not set")
            }
            secret = Sensitive(value)
        }
        guard keyID == nil || signVariable != nil else { throw UsageError("--key-id names the key of --sign-env; give both") }
        var settings = ProvisionerClientConfiguration(kafka: ["bootstrap.servers": bootstrap], requestsTopic: requestsTopic,
                                                      replyTopic: replyTopic, replyPartition: Int32(partition), replyKey: key,
                                                      signingSecret: secret, answerWindowMs: windowMs > 0 ? Int64(windowMs) : nil)
        settings.signingKeyID = keyID
        let configuration = settings
        let outcome = Self.await { () async throws(ProvisionerClientError) -> ProvisioningAnswer in
            let client = try ProvisionerClient(configuration: configuration)
            defer { client.close() }
            return try await client.provision(request)
        }
        switch outcome {
        case .success(let answer):
            writeStandardOutput((json ? Self.json(answer) : Self.line(answer)) + "\n")
            return 0
        case .failure(let error):
            throw CommandFailure("request \(AuditEvent.safeIdentifier(request.requestID)): \(error.description); next_action \(error.nextAction.rawValue)")
        }
    }

    /// Runs `body` to completion from synchronous code (the command's thread blocks).
    static func await<T: Sendable>(_ body: @escaping @Sendable () async throws(ProvisionerClientError) -> T) -> Result<T, ProvisionerClientError> {
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<Result<T, ProvisionerClientError>?>(nil)
        Task {
            let result: Result<T, ProvisionerClientError>
            do throws(ProvisionerClientError) { result = .success(try await body()) } catch { result = .failure(error) }
            box.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return box.withLock { $0! }
    }

    /// The request from `--file` or from the flags.
    static func request(_ arguments: inout CommandArguments) throws -> ClientRequest {
        if let file = arguments.option("file") {
            guard let data = FileManager.default.contents(atPath: file) else { throw CommandFailure("cannot read \(file)") }
            guard let document = try? JSONParser().parse(Array(data)) else { throw CommandFailure("\(file) is not JSON") }
            return try request(document)
        }
        var object: [String: JSONValue] = [
            "program": .string(try arguments.requiredOption("program")),
            "card": .object(["id": .string(try arguments.requiredOption("card-id")), "last4": .string(try arguments.requiredOption("last4"))]),
        ]
        if let id = arguments.option("request-id") { object["request_id"] = .string(id) }
        let opc = arguments.flag("opc")
        if let certificates = arguments.option("certificates") {
            object["wallet"] = .string("apple_pay")
            object["apple"] = .object([
                "certificates": .array(certificates.split(separator: ",").map { .string(String($0)) }),
                "nonce": .string(try arguments.requiredOption("nonce")), "nonce_signature": .string(try arguments.requiredOption("nonce-signature")),
            ])
        } else {
            object["wallet"] = .string(arguments.option("wallet") ?? "google_wallet")
            var google: [String: JSONValue] = ["wallet_id": .string(try arguments.requiredOption("wallet-id")),
                                               "device_id": .string(try arguments.requiredOption("device-id")),
                                               "google_opc_requested": .bool(opc)]
            if let session = arguments.option("server-session-id") { google["server_session_id"] = .string(session) }
            object["google"] = .object(google)
        }
        return try request(.object(object))
    }

    /// A `ClientRequest` from a request-shaped document (base64 values decoded: the library takes bytes).
    static func request(_ document: JSONValue) throws -> ClientRequest {
        guard let program = document["program"]?.stringValue, let cardID = document["card"]?["id"]?.stringValue,
              let last4 = document["card"]?["last4"]?.stringValue else {
            throw UsageError("the request needs program, card.id and card.last4")
        }
        let wallet = document["wallet"]?.stringValue.flatMap(Wallet.init(rawValue:)) ?? (document["apple"] != nil ? .applePay : .googleWallet)
        let handshake: ClientRequest.Handshake
        if wallet == .applePay {
            guard let apple = document["apple"], let certificates = apple["certificates"]?.arrayValue?.compactMap({ $0.stringValue.flatMap { Data(base64Encoded: $0) } }),
                  !certificates.isEmpty, let nonce = apple["nonce"]?.stringValue.flatMap({ Data(base64Encoded: $0) }),
                  let signature = apple["nonce_signature"]?.stringValue.flatMap({ Data(base64Encoded: $0) }) else {
                throw UsageError("Apple Pay needs base64 certificates, nonce and nonce_signature")
            }
            handshake = .apple(certificates: certificates, nonce: nonce, nonceSignature: signature, deviceType: apple["device_type"]?.stringValue,
                               appVersion: apple["app_version"]?.stringValue)
        } else {
            guard let google = document["google"], let walletID = google["wallet_id"]?.stringValue, let deviceID = google["device_id"]?.stringValue else {
                throw UsageError("Google wallets need google.wallet_id and google.device_id")
            }
            handshake = .google(wallet: wallet, walletID: walletID, deviceID: deviceID, opcRequested: google["google_opc_requested"]?.boolValue ?? false,
                                serverSessionID: google["server_session_id"]?.stringValue)
        }
        var request = ClientRequest(program: program, cardID: cardID, last4: last4, userID: document["card"]?["user_id"]?.stringValue,
                                    handshake: handshake)
        if let id = document["request_id"]?.stringValue { request.requestID = id }
        return request
    }

    /// What the payload is, without its values.
    static func payloadSummary(_ answer: ProvisioningAnswer) -> JSONValue {
        switch answer.payload {
        case .apple(let activation, let pass, let ephemeral)?:
            .object(["kind": .string("apple"), "activation_data_bytes": .integer(Int64(activation.count)),
                     "encrypted_pass_data_bytes": .integer(Int64(pass.count)), "ephemeral_public_key_bytes": .integer(Int64(ephemeral.count))])
        case .googleWallet(let card, let opc)?:
            .object(["kind": .string("google_wallet"), "opaque_payment_card_chars": .integer(Int64(card.revealed.count)),
                     "google_provisioning_payload": .bool(opc != nil)])
        case .googlePay(let card, let network)?:
            .object(["kind": .string("google_pay"), "opaque_payment_card_chars": .integer(Int64(card.revealed.count)),
                     "network": network.map(JSONValue.string) ?? .null])
        case nil:
            .null
        }
    }

    static func json(_ answer: ProvisioningAnswer) -> String {
        let object: [String: JSONValue] = [
            "request_id": .string(answer.requestID), "status": .string(answer.status.rawValue), "final": .bool(answer.isFinal),
            "code": answer.code.map { .string($0.rawValue) } ?? .null, "message": .string(answer.result.message),
            "next_action": .string(answer.nextAction.rawValue), "payload": payloadSummary(answer),
            "payload_problem": answer.payloadProblem.map(JSONValue.string) ?? .null,
        ]
        return String(decoding: JSONWriter.encode(.object(object)), as: UTF8.self)
    }

    static func line(_ answer: ProvisioningAnswer) -> String {
        var text = "\(answer.requestID): \(answer.status.rawValue)\(answer.isFinal ? "" : " (not final)")"
        if let code = answer.code { text += " \(code.rawValue)" }
        text += ", next_action \(answer.nextAction.rawValue)"
        switch answer.payload {
        case .apple(let activation, let pass, let ephemeral)?:
            text += "; payload: Apple Pay (activation_data \(activation.count) B, encrypted_pass_data \(pass.count) B, ephemeral_public_key \(ephemeral.count) B)"
        case .googleWallet(_, let opc)?: text += "; payload: Google Wallet opaque card\(opc == nil ? "" : " + Google OPC")"
        case .googlePay(_, let network)?: text += "; payload: Google Pay opaque card (\(network ?? "no network"))"
        case nil: if let problem = answer.payloadProblem { text += "; payload not usable: \(problem)" }
        }
        return text
    }
}

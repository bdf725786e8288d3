import Contract
import Foundation

/// Test data: the committed certificate fixtures and valid request documents to edit.
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let corpusDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("FuzzCorpus")

    /// The bytes of a fixture file (empty when missing, which makes the using test fail).
    static func bytes(_ name: String) -> [UInt8] {
        (try? [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))) ?? []
    }

    /// A fixture file as strict base64.
    static func base64(_ name: String) -> String {
        Crypto.base64Encode(bytes(name))
    }

    /// One reply key for the whole run (key generation is cheap, but sharing keeps tests fast).
    static let replyKey: ECPrivateKey? = try? ECPrivateKey.generate()

    static var replyJWK: JSONValue {
        guard let key = replyKey, let publicKey = try? key.publicKey else { return .null }
        return publicKey.jsonValue
    }

    static let nonce = Crypto.base64Encode(Array("nonce-0001".utf8))
    static let nonceSignature = Crypto.base64Encode(Array("signature-of-the-nonce".utf8))

    /// A valid Apple Pay provisioning request (Imprint and Gnosis rules both pass).
    static func appleDocument(requestID: String = "req-apple-1", program: String = "demo-imprint") -> JSONValue {
        .object([
            "version": .integer(1), "request_id": .string(requestID), "program": .string(program),
            "kind": .string("provision"), "wallet": .string("apple_pay"),
            "card": .object(["id": .string("pm_7Hq2"), "last4": .string("4242"), "user_id": .string("u_881")]),
            "apple": .object([
                "certificates": .array([.string(base64("leaf.der")), .string(base64("intermediate.der"))]),
                "nonce": .string(nonce), "nonce_signature": .string(nonceSignature),
                "device_type": .string("iphone"), "app_version": .string("5.2.0"),
            ]),
            "started_at": .string("2026-11-29T10:00:00.000Z"), "deadline": .string("2026-11-29T10:00:19.000Z"),
            "reply": .object(["jwk": replyJWK]),
        ])
    }

    /// A valid Google request (`google_wallet` with the Google OPC requested, or `google_pay`).
    static func googleDocument(wallet: String = "google_wallet", requestID: String = "req-google-1",
                               program: String = "demo-imprint") -> JSONValue {
        var google: [String: JSONValue] = ["wallet_id": .string("3a5f9c21e8b74d6f"), "device_id": .string("9b1c7e04f2a8")]
        if wallet == "google_wallet" {
            google["google_opc_requested"] = .bool(true)
            google["server_session_id"] = .string("session-from-google")
        }
        return .object([
            "version": .integer(1), "request_id": .string(requestID), "program": .string(program),
            "wallet": .string(wallet),
            "card": .object(["id": .string("card-77"), "last4": .string("1234"), "user_id": .string("ext-9")]),
            "google": .object(google), "reply": .object(["jwk": replyJWK]),
        ])
    }

    static let walletToken: String = {
        let token: JSONValue = .object([
            "version": .string("EC_v1"), "data": .string("a2RIZEdRPT0="), "signature": .string("TUlBR0NTcUdTSWIzRFFFSA=="),
            "header": .object(["transactionId": .string("d3b28af0f8"), "ephemeralPublicKey": .string("TUZrd0U="),
                               "publicKeyHash": .string("ZHhDSzZvPQ==")]),
        ])
        return String(decoding: JSONWriter.encode(token), as: UTF8.self)
    }()

    /// A valid Worldpay payment request.
    static func paymentDocument(requestID: String = "req-pay-1") -> JSONValue {
        .object([
            "version": .integer(1), "request_id": .string(requestID), "program": .string("demo-worldpay"),
            "kind": .string("payment"), "wallet": .string("apple_pay"), "card": .object(["id": .string("cust-42")]),
            "payment": .object([
                "transaction_reference": .string("Memory265-13/08/1876"),
                "amount": .object(["currency": .string("GBP"), "value": .integer(250)]),
                "wallet_token": .string(walletToken), "narrative": .string("Mind Palace"), "auto_settle": .bool(false),
                "customer_agreement": .object(["type": .string("subscription"), "stored_card_usage": .string("first")]),
            ]),
        ])
    }

    /// A valid Worldpay payment action request.
    static func paymentActionDocument(action: String = "settle", amount: JSONValue? = nil) -> JSONValue {
        var members: [String: JSONValue] = [
            "action": .string(action), "link": .string("https://try.access.worldpay.com/payments/settlements/full/abc"),
            "transaction_reference": .string("Memory265-13/08/1876"),
        ]
        if let amount { members["amount"] = amount }
        return .object([
            "version": .integer(1), "request_id": .string("req-act-1"), "program": .string("demo-worldpay"),
            "kind": .string("payment_action"), "wallet": .string("apple_pay"), "card": .object(["id": .string("cust-42")]),
            "payment_action": .object(members),
        ])
    }

    static func encode(_ document: JSONValue) -> [UInt8] {
        JSONWriter.encode(document)
    }

    /// Decodes a document that must decode; `nil` otherwise (the caller `#require`s it).
    static func decoded(_ document: JSONValue) -> ProvisioningRequest? {
        if case .decoded(let request) = RequestDecoder.decode(encode(document)) { return request }
        return nil
    }

    /// Decodes a document that must be rejected; `nil` otherwise.
    static func rejection(_ document: JSONValue) -> RequestRejection? {
        if case .rejected(let rejection) = RequestDecoder.decode(encode(document)) { return rejection }
        return nil
    }

    /// Decodes bytes that must be dead-lettered; `nil` otherwise.
    static func deadLetter(_ bytes: [UInt8]) -> DeadLetterCause? {
        if case .deadLetter(let cause) = RequestDecoder.decode(bytes) { return cause }
        return nil
    }
}

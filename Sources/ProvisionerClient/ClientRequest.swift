import Contract
import Foundation

/// One provisioning request as a backend has it: the card, and the wallet's handshake values as
/// PassKit or Google's callback hands them over. `encodedJSON` writes the contract's request
/// (base64 done here), with `started_at` = when the handshake arrived.
public struct ClientRequest: Sendable {
    /// The wallet's handshake values.
    public enum Handshake: Sendable {
        /// PassKit's `generateRequestWithCertificateChain`: certificates (leaf first, DER), nonce, nonce signature.
        case apple(certificates: [Data], nonce: Data, nonceSignature: Data, deviceType: String? = nil, appVersion: String? = nil)
        /// Google's push-provisioning callback: Google Wallet (`googleWallet`, with the OPC flag and
        /// server session id) or Legacy Google Pay (`googlePay`).
        case google(wallet: Wallet = .googleWallet, walletID: String, deviceID: String, opcRequested: Bool = false,
                    serverSessionID: String? = nil)
    }

    /// `request_id` (default: a new UUID); the key of every answer.
    public var requestID: String
    /// The program (issuer configuration) on the worker.
    public var program: String
    /// The issuer's card id (the message key).
    public var cardID: String
    /// Last four digits of the card.
    public var last4: String
    /// The backend's user id, when the issuer wants it.
    public var userID: String?
    /// The wallet's handshake.
    public var handshake: Handshake
    /// When the handshake arrived (`started_at`): the window starts here.
    public var handshakeAt: Date
    /// An earlier deadline than the window gives, if any.
    public var deadline: Date?
    /// The `kafka_correlationId` the request is sent with (default: 16 random bytes). Keep it with
    /// the request id and program: `ProvisionerClient.lookup` finds an answer after a restart only
    /// when its correlation id is this one.
    public var correlationID: [UInt8]

    /// Creates a request; `handshakeAt` defaults to now (take it when the handshake arrived).
    public init(requestID: String = UUID().uuidString.lowercased(), program: String, cardID: String, last4: String, userID: String? = nil,
                handshake: Handshake, handshakeAt: Date = Date(), deadline: Date? = nil, correlationID: [UInt8] = Crypto.randomBytes(16)) {
        self.requestID = requestID
        self.program = program
        self.cardID = cardID
        self.last4 = last4
        self.userID = userID
        self.handshake = handshake
        self.handshakeAt = handshakeAt
        self.deadline = deadline
        self.correlationID = correlationID
    }

    /// The request's identity (program, request id): what its answers must name.
    public var identity: RequestIdentity { RequestIdentity(program: program, requestID: requestID) }

    /// The wallet the handshake is for.
    public var wallet: Wallet {
        switch handshake {
        case .apple: .applePay
        case .google(let wallet, _, _, _, _): wallet
        }
    }

    /// `started_at` in epoch milliseconds.
    var startedAtMs: Int64 { Int64((handshakeAt.timeIntervalSince1970 * 1000).rounded()) }

    /// The request as the contract's JSON, with `reply.jwk` = `replyKey` (P-256).
    public func encodedJSON(replyKey: ECPublicJWK) -> [UInt8] {
        encodedJSON(replyKey: .p256(replyKey))
    }

    /// The request as the contract's JSON, with `reply.jwk` = `replyKey` (either curve).
    public func encodedJSON(replyKey: JWERecipient) -> [UInt8] {
        var card: [String: JSONValue] = ["id": .string(cardID), "last4": .string(last4)]
        if let userID { card["user_id"] = .string(userID) }
        var object: [String: JSONValue] = [
            "version": .integer(1), "request_id": .string(requestID), "program": .string(program), "kind": .string("provision"),
            "wallet": .string(wallet.rawValue), "card": .object(card),
            "started_at": .string(RFC3339.format(milliseconds: startedAtMs)),
            "reply": .object(["jwk": replyKey.jsonValue]),
        ]
        if let deadline { object["deadline"] = .string(RFC3339.format(milliseconds: Int64((deadline.timeIntervalSince1970 * 1000).rounded()))) }
        switch handshake {
        case .apple(let certificates, let nonce, let nonceSignature, let deviceType, let appVersion):
            var apple: [String: JSONValue] = [
                "certificates": .array(certificates.map { .string($0.base64EncodedString()) }),
                "nonce": .string(nonce.base64EncodedString()), "nonce_signature": .string(nonceSignature.base64EncodedString()),
            ]
            if let deviceType { apple["device_type"] = .string(deviceType) }
            if let appVersion { apple["app_version"] = .string(appVersion) }
            object["apple"] = .object(apple)
        case .google(let wallet, let walletID, let deviceID, let opcRequested, let serverSessionID):
            var google: [String: JSONValue] = ["wallet_id": .string(walletID), "device_id": .string(deviceID)]
            if wallet == .googleWallet { google["google_opc_requested"] = .bool(opcRequested) }
            if let serverSessionID { google["server_session_id"] = .string(serverSessionID) }
            object["google"] = .object(google)
        }
        return JSONWriter.encode(.object(object))
    }
}

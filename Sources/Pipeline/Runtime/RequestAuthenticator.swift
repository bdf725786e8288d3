import Contract
import Kafka

/// Optional defence in depth: programs configured with `request_signing` only accept requests
/// whose `x-request-signature` header is `v1=<hex HMAC-SHA256(secret, message value)>`.
struct RequestAuthenticator: Sendable {
    /// Header carrying the signature.
    static let header = "x-request-signature"

    let secrets: [String: Sensitive]

    /// Nil when the program requires no signature or the signature is valid; else why not.
    func problem(program: String, value: [UInt8], headers: [KafkaHeader]) -> String? {
        guard let secret = secrets[program] else { return nil }
        guard let raw = headers.last(where: { $0.key == Self.header })?.value else {
            return "program \(program) requires a signed request (header \(Self.header)) and none was sent"
        }
        let text = String(decoding: raw, as: UTF8.self)
        guard text.hasPrefix("v1="), let given = Crypto.bytes(fromHex: String(text.dropFirst(3))) else {
            return "the \(Self.header) header must be v1=<hex HMAC-SHA256>"
        }
        let expected = Crypto.hmacSHA256(key: Array(secret.revealed.utf8), data: value)
        return Crypto.constantTimeEquals(given, expected) ? nil : "the request signature does not match"
    }

    /// The header value a program's backend sends (used by `provisioner produce --sign-env` and tests).
    static func signature(secret: Sensitive, value: [UInt8]) -> String {
        "v1=" + Crypto.hex(Crypto.hmacSHA256(key: Array(secret.revealed.utf8), data: value))
    }
}

/// Optional request authenticity (defence in depth): a program's backend signs each request
/// message with a shared secret, `x-request-signature: v1=<hex HMAC-SHA256(secret, value bytes)>`.
public enum RequestSignature {
    /// The Kafka header carrying the signature.
    public static let header = "x-request-signature"

    /// The header value for `value` signed with `secret`.
    public static func sign(secret: Sensitive, value: [UInt8]) -> String {
        "v1=" + Crypto.hex(Crypto.hmacSHA256(key: Array(secret.revealed.utf8), data: value))
    }

    /// Nil when `headerValue` is a valid signature of `value`, else why not (never quoting secrets).
    public static func problem(headerValue: [UInt8]?, secret: Sensitive, value: [UInt8]) -> String? {
        guard let headerValue else { return "the request is not signed (header \(header) is missing)" }
        let text = String(decoding: headerValue, as: UTF8.self)
        guard text.hasPrefix("v1="), let given = Crypto.bytes(fromHex: String(text.dropFirst(3))) else {
            return "the \(header) header must be v1=<hex HMAC-SHA256>"
        }
        let expected = Crypto.hmacSHA256(key: Array(secret.revealed.utf8), data: value)
        return Crypto.constantTimeEquals(given, expected) ? nil : "the request signature does not match"
    }
}

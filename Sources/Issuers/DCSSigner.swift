import Contract
import HTTP

/// DCS request signing: `X-DAPI-API-KEY`, `X-DAPI-TIMESTAMP` (epoch milliseconds), `X-DAPI-NONCE`
/// (fresh per HTTP send) and `X-DAPI-SIGN` = lowercase hex HMAC-SHA256(secret, apiKey + timestamp +
/// nonce + body).
public enum DCSSigner {
    /// The API key header.
    public static let apiKeyHeader = "X-DAPI-API-KEY"
    /// The timestamp header.
    public static let timestampHeader = "X-DAPI-TIMESTAMP"
    /// The nonce header.
    public static let nonceHeader = "X-DAPI-NONCE"
    /// The signature header.
    public static let signatureHeader = "X-DAPI-SIGN"

    /// Lowercase hex HMAC-SHA256 under `secret` of `apiKey + timestamp + nonce + body`.
    public static func signature(apiKey: Sensitive, secret: Sensitive, timestamp: String, nonce: String, body: [UInt8]) -> String {
        var message = Array(apiKey.revealed.utf8)
        message.append(contentsOf: timestamp.utf8)
        message.append(contentsOf: nonce.utf8)
        message.append(contentsOf: body)
        return Crypto.hex(Crypto.hmacSHA256(key: Array(secret.revealed.utf8), data: message))
    }

    /// A fresh nonce: 16 random bytes as 32 lowercase hex digits.
    public static func makeNonce() -> String {
        Crypto.hex(Crypto.randomBytes(16))
    }

    /// `request` with the four `X-DAPI-*` headers for a send at `timestampMs`, replacing any from
    /// an earlier send; `nonce` defaults to a fresh one.
    public static func sign(_ request: HTTPClientRequest, apiKey: Sensitive, secret: Sensitive, timestampMs: Int64,
                            nonce: String = makeNonce()) -> HTTPClientRequest {
        var signed = request
        let names = [apiKeyHeader, timestampHeader, nonceHeader, signatureHeader].map { $0.lowercased() }
        signed.headers.removeAll { names.contains($0.name.lowercased()) }
        let timestamp = String(timestampMs)
        signed.headers.append(HTTPHeader(name: apiKeyHeader, value: apiKey.revealed))
        signed.headers.append(HTTPHeader(name: timestampHeader, value: timestamp))
        signed.headers.append(HTTPHeader(name: nonceHeader, value: nonce))
        signed.headers.append(HTTPHeader(name: signatureHeader,
                                         value: signature(apiKey: apiKey, secret: secret, timestamp: timestamp, nonce: nonce, body: request.body)))
        return signed
    }
}

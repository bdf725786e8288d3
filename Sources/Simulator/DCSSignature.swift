import Contract
import HTTP

/// DCS request signing: `X-DAPI-SIGN` = lowercase hex HMAC-SHA256(secret, apiKey + timestamp +
/// nonce + body), where the first three are the header values' UTF-8 bytes and body is the raw
/// request body.
public enum DCSSignature {
    /// The `X-DAPI-SIGN` value.
    public static func sign(secret: String, apiKey: String, timestamp: String, nonce: String, body: [UInt8]) -> String {
        var message = Array((apiKey + timestamp + nonce).utf8)
        message.append(contentsOf: body)
        return Crypto.hex(Crypto.hmacSHA256(key: Array(secret.utf8), data: message))
    }

    /// The four `X-DAPI-*` headers for `body`, with the current time and a fresh random nonce unless given.
    public static func headers(apiKey: String, secret: String, body: [UInt8], timestampMs: Int64? = nil,
                               nonce: String? = nil) -> [HTTPHeader] {
        let timestamp = String(timestampMs ?? SimulatorEngine.nowMs())
        let requestNonce = nonce ?? Crypto.hex(Crypto.randomBytes(16))
        return [
            HTTPHeader(name: "X-DAPI-API-KEY", value: apiKey),
            HTTPHeader(name: "X-DAPI-TIMESTAMP", value: timestamp),
            HTTPHeader(name: "X-DAPI-NONCE", value: requestNonce),
            HTTPHeader(name: "X-DAPI-SIGN", value: sign(secret: secret, apiKey: apiKey, timestamp: timestamp, nonce: requestNonce, body: body)),
        ]
    }
}

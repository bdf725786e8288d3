import Contract
import HTTP

/// The secrets a program uses toward its issuer.
///
/// Imprint, Gnosis Pay and Worldpay send `apiKey` as `Bearer <key>` in `apiKeyHeader`
/// (`Authorization` unless the program says otherwise); DCS sends it in `X-DAPI-API-KEY` and signs
/// every request with `apiSecret`. Both values stay `Sensitive`: they reach the HTTP request and
/// the HMAC, never a log line or an error message.
public struct IssuerCredentials: Sendable, Hashable {
    /// The API key (Imprint key, Gnosis Pay token, Worldpay key, DCS `X-DAPI-API-KEY`).
    public var apiKey: Sensitive
    /// The DCS signing secret for `X-DAPI-SIGN`; `nil` for the other issuers.
    public var apiSecret: Sensitive?
    /// The header carrying the key for bearer-token issuers.
    public var apiKeyHeader: String

    /// Creates credentials; the key travels as `Authorization: Bearer <key>` by default.
    public init(apiKey: Sensitive, apiSecret: Sensitive? = nil, apiKeyHeader: String = "Authorization") {
        self.apiKey = apiKey
        self.apiSecret = apiSecret
        self.apiKeyHeader = apiKeyHeader
    }

    /// The header that authenticates a bearer-token issuer call: `Bearer <key>` in
    /// `Authorization`, or the bare key in any other configured header (an API-key header such as
    /// `X-Api-Key` carries the key itself).
    public var bearerHeader: HTTPHeader {
        if apiKeyHeader.lowercased() == "authorization" {
            return HTTPHeader(name: apiKeyHeader, value: "Bearer " + apiKey.revealed)
        }
        return HTTPHeader(name: apiKeyHeader, value: apiKey.revealed)
    }
}

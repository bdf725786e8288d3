import Contract
import HTTP
import Simulator
import Testing

/// An in-process simulator on a free loopback port and a real HTTP client talking to it.
final class SimulatorHarness: Sendable {
    let simulator: IssuerSimulator
    let client = HTTPClient()
    let base: String

    init(profile: SimulatorProfile = SimulatorProfile()) throws {
        simulator = try IssuerSimulator(host: "127.0.0.1", port: 0, profile: profile)
        base = "http://127.0.0.1:\(simulator.port)"
    }

    deinit {
        client.shutdown()
        simulator.stop()
    }

    /// Sends a request and returns the answer; a transport failure fails the test.
    func send(_ method: String, _ path: String, headers: [HTTPHeader] = [], body: [UInt8] = [],
              timeoutMs: Int = 10_000) async throws -> HTTPClientResponse {
        let request = HTTPClientRequest(method: method, url: base + path, headers: headers, body: body, timeoutMs: timeoutMs)
        switch await client.execute(request) {
        case .success(let response): return response
        case .failure(let error): throw error
        }
    }

    /// Sends a JSON body.
    func send(_ method: String, _ path: String, headers: [HTTPHeader] = [], json: JSONValue,
              timeoutMs: Int = 10_000) async throws -> HTTPClientResponse {
        try await send(method, path, headers: headers + [HTTPHeader(name: "Content-Type", value: "application/json")],
                       body: JSONWriter.encode(json), timeoutMs: timeoutMs)
    }

    static func bearer(_ key: String) -> [HTTPHeader] {
        [HTTPHeader(name: "Authorization", value: "Bearer \(key)")]
    }

    /// `POST /imprint/v2/payment_methods/{card}/provision/{wallet}` with the demo key.
    func imprint(_ card: String, _ wallet: String, _ fields: [String: JSONValue], key: String = "sim-imprint-key",
                 timeoutMs: Int = 10_000) async throws -> HTTPClientResponse {
        try await send("POST", "/imprint/v2/payment_methods/\(card)/provision/\(wallet)", headers: Self.bearer(key),
                       json: .object(fields), timeoutMs: timeoutMs)
    }

    /// `GET /imprint/v2/payment_methods/{card}/wallet_tokens` with the demo key.
    func imprintTokens(_ card: String) async throws -> [JSONValue] {
        let response = try await send("GET", "/imprint/v2/payment_methods/\(card)/wallet_tokens", headers: Self.bearer("sim-imprint-key"))
        #expect(response.status == 200)
        return try Self.json(response)["data"]?.arrayValue ?? []
    }

    /// A signed DCS call with the demo credentials; `headers` replaces the signed headers when given.
    func dcs(_ endpoint: String, _ fields: [String: JSONValue], apiKey: String = "sim-dcs-key", secret: String = "sim-dcs-secret",
             timestampMs: Int64? = nil, nonce: String? = nil, headers: [HTTPHeader]? = nil) async throws -> HTTPClientResponse {
        let body = JSONWriter.encode(.object(fields))
        let signed = headers ?? DCSSignature.headers(apiKey: apiKey, secret: secret, body: body, timestampMs: timestampMs, nonce: nonce)
        return try await send("POST", "/dcs" + endpoint, headers: signed + [HTTPHeader(name: "Content-Type", value: "application/json")],
                              body: body)
    }

    /// The DCS envelope code of a response.
    static func dcsCode(_ response: HTTPClientResponse) throws -> String? {
        try json(response)["code"]?.stringValue
    }

    /// `POST /gnosis/api/v1/cards/{card}/apple-pay/provision` with the demo token.
    func gnosis(_ card: String, _ fields: [String: JSONValue], token: String = "sim-gnosis-token") async throws -> HTTPClientResponse {
        try await send("POST", "/gnosis/api/v1/cards/\(card)/apple-pay/provision", headers: Self.bearer(token), json: .object(fields))
    }

    /// The `/_sim/calls` lines.
    func calls() async throws -> [JSONValue] {
        try Self.json(try await send("GET", "/_sim/calls"))["calls"]?.arrayValue ?? []
    }

    static func json(_ response: HTTPClientResponse) throws -> JSONValue {
        try JSONParser().parse(response.body)
    }

    /// The Imprint error code of a response.
    static func imprintCode(_ response: HTTPClientResponse) throws -> String? {
        try json(response)["error"]?["code"]?.stringValue
    }
}

import Contract
import HTTP
import Issuers
import Testing

/// DCS `X-DAPI-SIGN` against a vector computed outside Swift:
/// `printf '%s' "$key$ts$nonce$body" | openssl dgst -sha256 -hmac "$secret"`.
@Suite(.timeLimit(.minutes(5))) struct DCSSigningTests {
    static let key = "dcs_test_key_01"
    static let secret = "dcs-test-secret-Ω-2026"
    static let timestamp: Int64 = 1_764_460_800_123
    static let nonce = "4f1c2a9be07d43c88a51f0e2d6b7c3a9"
    static let body = #"{"externalUserId":"u_881","cardId":"card_42","clientCustomerId":"3a5f9c21e8b74d6f","deviceId":"9b1c7e04f2a8"}"#
    static let expected = "0d11c7b492bf58fd440a9b0ffbc30a45deff911e70a64dfaa9ea6920a1443c27"

    @Test func signatureMatchesTheOpenSSLVector() {
        let signature = DCSSigner.signature(apiKey: Sensitive(Self.key), secret: Sensitive(Self.secret),
                                            timestamp: String(Self.timestamp), nonce: Self.nonce, body: Array(Self.body.utf8))
        #expect(signature == Self.expected)
        let other = DCSSigner.signature(apiKey: Sensitive(Self.key), secret: Sensitive(Self.secret),
                                        timestamp: String(Self.timestamp + 1), nonce: Self.nonce, body: Array(Self.body.utf8))
        #expect(other != Self.expected)
    }

    @Test func adapterBodyAndHeadersMatchTheVector() throws {
        let endpoint = Requests.endpoint(.dcs, key: Self.key, secret: Self.secret)
        let adapter = DCSAdapter(endpoint: endpoint)
        let request = Requests.google(card: "card_42", userID: "u_881")
        let unsigned = try adapter.makeRequest(for: request)
        #expect(Requests.text(unsigned.body) == Self.body)
        #expect(unsigned.url == "https://issuer.example/card/v2/google-bind-wallet")
        let signed = DCSSigner.sign(unsigned, apiKey: Sensitive(Self.key), secret: Sensitive(Self.secret),
                                    timestampMs: Self.timestamp, nonce: Self.nonce)
        let response = HTTPClientResponse(status: 200, headers: signed.headers, body: [], elapsedMs: 0)
        #expect(response.header("X-DAPI-API-KEY") == Self.key)
        #expect(response.header("X-DAPI-TIMESTAMP") == "1764460800123")
        #expect(response.header("X-DAPI-NONCE") == Self.nonce)
        #expect(response.header("X-DAPI-SIGN") == Self.expected)
        #expect(signed.body == unsigned.body)
    }

    @Test func everySendGetsAFreshNonceAndAValidSignature() throws {
        let endpoint = Requests.endpoint(.dcs, key: Self.key, secret: Self.secret)
        let adapter = DCSAdapter(endpoint: endpoint)
        let unsigned = try adapter.makeRequest(for: Requests.apple(userID: "u_1", last4: "4242"))
        let first = adapter.prepareForSending(unsigned, nowMs: 1_000)
        let second = adapter.prepareForSending(first, nowMs: 2_000)
        func headers(_ request: HTTPClientRequest) -> HTTPClientResponse {
            HTTPClientResponse(status: 0, headers: request.headers, body: [], elapsedMs: 0)
        }
        let a = headers(first), b = headers(second)
        #expect(second.headers.filter { $0.name.hasPrefix("X-DAPI") }.count == 4, "re-signing replaces, never duplicates")
        #expect(a.header("X-DAPI-NONCE") != b.header("X-DAPI-NONCE"))
        #expect(a.header("X-DAPI-TIMESTAMP") == "1000" && b.header("X-DAPI-TIMESTAMP") == "2000")
        for signed in [a, b] {
            let nonce = try #require(signed.header("X-DAPI-NONCE"))
            #expect(nonce.utf8.count == 32)
            let expected = DCSSigner.signature(apiKey: Sensitive(Self.key), secret: Sensitive(Self.secret),
                                               timestamp: signed.header("X-DAPI-TIMESTAMP") ?? "", nonce: nonce, body: unsigned.body)
            #expect(signed.header("X-DAPI-SIGN") == expected)
        }
    }
}

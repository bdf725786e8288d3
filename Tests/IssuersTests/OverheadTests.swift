import Contract
import HTTP
import Issuers
import Simulator
import Testing

/// What the adapters and the client add to an issuer call, measured against the simulator.
@Suite(.serialized, .timeLimit(.minutes(5))) struct OverheadTests {
    @Test func clientAddsLittleToARawHTTPExchange() async throws {
        let fixture = try SimulatorFixture()
        let endpoint = fixture.endpoint(.imprint)
        let handshake = try SimulatedDevice().googleHandshake(opcRequested: false)
        let request = SimulatorFixture.googleRequest(handshake, wallet: .googlePay, card: SimulatorFixture.card())
        let adapter = endpoint.adapter
        var raw = try adapter.makeRequest(for: request)
        raw.timeoutMs = 5_000
        let rounds = 300
        for _ in 0..<20 { _ = await fixture.http.execute(raw) }  // warm the connection and the simulator

        var rawTotal = 0.0
        var clientTotal = 0.0
        for _ in 0..<rounds {
            var start = WallClock.monotonicMs()
            let response = try await fixture.http.execute(raw).get()
            rawTotal += WallClock.monotonicMs() - start
            #expect(response.status == 200 || response.status == 409)
            start = WallClock.monotonicMs()
            let report = await fixture.client.provision(request, endpoint: endpoint, publishByMs: WallClock.nowMs() + 5_000)
            clientTotal += WallClock.monotonicMs() - start
            #expect(report.attempts == 1)
        }
        let rawMean = rawTotal / Double(rounds), clientMean = clientTotal / Double(rounds)
        print("issuer call overhead: raw HTTP \(rawMean) ms, IssuerClient \(clientMean) ms, difference \(clientMean - rawMean) ms per call")
        #expect(clientMean - rawMean < 1.0, "build + interpret + outcome should cost well under a millisecond")

        // The pure part (build, sign, read, outcome) without HTTP, on a DCS Apple call (the heaviest: HMAC, base64 checks).
        let dcs = fixture.endpoint(.dcs).adapter
        let apple = SimulatorFixture.appleRequest(try SimulatedDevice().appleHandshake(), card: "c", userID: "u", last4: "4242")
        let success = HTTPClientResponse(status: 200, headers: [], body: Array(#"{"code":"SYS_SUCCESS","message":"","messageDetail":null,"data":{"encryptedPassData":"\#(String(repeating: "QUJD", count: 400))","activationData":"\#(String(repeating: "QUJD", count: 22))","ephemeralPublicKey":"\#(String(repeating: "QUJD", count: 22))","vCardID":"v"}}"#.utf8), elapsedMs: 1)
        let iterations = 2_000
        let start = WallClock.monotonicMs()
        for index in 0..<iterations {
            let built = try dcs.makeRequest(for: apple)
            let signed = dcs.prepareForSending(built, nowMs: Int64(index))
            let answer = dcs.answer(for: success, to: apple)
            _ = OutcomeTable.outcome(for: answer, issuer: .dcs, wallet: .applePay, kind: .provision)
            #expect(!signed.headers.isEmpty)
        }
        let perCall = (WallClock.monotonicMs() - start) * 1000 / Double(iterations)
        print("adapter work per DCS Apple call (build, sign, read, outcome): \(perCall) µs")
        #expect(perCall < 2_000)
    }
}

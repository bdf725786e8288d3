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

        // Interleaved pairs, compared by the median of their differences: a busy moment slows
        // both halves of a pair, and a few slow pairs do not move the median. What this guards
        // is that the client adds no wait of its own (a poll interval, a timer hop) to a call;
        // how fast it is belongs in `provisioner-bench`.
        var differences: [Double] = []
        var rawTimes: [Double] = []
        var clientTimes: [Double] = []
        for _ in 0..<rounds {
            var start = WallClock.monotonicMs()
            let response = try await fixture.http.execute(raw).get()
            let rawMs = WallClock.monotonicMs() - start
            #expect(response.status == 200 || response.status == 409)
            start = WallClock.monotonicMs()
            let report = await fixture.client.provision(request, endpoint: endpoint, publishByMs: WallClock.nowMs() + 5_000)
            let clientMs = WallClock.monotonicMs() - start
            #expect(report.attempts == 1)
            differences.append(clientMs - rawMs)
            rawTimes.append(rawMs)
            clientTimes.append(clientMs)
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        print("issuer call overhead: raw HTTP median \(median(rawTimes)) ms, IssuerClient median \(median(clientTimes)) ms, median difference \(median(differences)) ms per call")
        #expect(median(differences) < 5.0, "the client adds \(median(differences)) ms to a call (median of \(rounds) interleaved pairs)")

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
        // A sanity bound with room for a busy machine (a debug build does this in well under 1 ms).
        #expect(perCall < 20_000, "\(perCall) µs per call")
    }
}

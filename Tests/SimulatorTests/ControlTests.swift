import Contract
import Foundation
import HTTP
import Simulator
import Testing

extension SimulatorTests {
    @Suite(.timeLimit(.minutes(5))) struct Control {
        @Test func callsAreStampedWhenTheyArriveAndResetForgetsTheStamps() async throws {
            let harness = try SimulatorHarness()
            let device = try SimulatedDevice()
            let before = Int64(Date().timeIntervalSince1970 * 1000)
            _ = try await harness.imprint("pm_t1", "google_wallet", device.googleHandshake().requestFields())
            _ = try await harness.imprint("pm_t2", "google_wallet", device.googleHandshake().requestFields(), key: "wrong")  // 401: counted
            let after = Int64(Date().timeIntervalSince1970 * 1000) + 1
            #expect(harness.simulator.callCount(fromMs: before, toMs: after) == 2)
            #expect(harness.simulator.callCount(fromMs: after, toMs: .max) == 0)
            #expect(harness.simulator.callCount(fromMs: 0, toMs: before) == 0)
            harness.simulator.reset()
            #expect(harness.simulator.callCount(fromMs: 0, toMs: .max) == 0)
        }

        @Test func callsAreCountedPerCardAndHandshakeAndResetForgetsThem() async throws {
            let harness = try SimulatorHarness()
            let device = try SimulatedDevice()
            let apple = try device.appleHandshake()
            _ = try await harness.imprint("pm_c1", "apple_pay", apple.requestFields)
            _ = try await harness.imprint("pm_c1", "apple_pay", apple.requestFields)  // nonce reused: still counted
            let google = device.googleHandshake()
            _ = try await harness.imprint("pm-missing", "google_wallet", google.requestFields())
            _ = try await harness.imprint("pm_c2", "google_wallet", google.requestFields(), key: "wrong")  // 401: counted
            let calls = try await harness.calls()
            #expect(calls.count == 3)
            #expect(calls[0]["issuer"]?.stringValue == "imprint")
            #expect(calls[0]["card_id"]?.stringValue == "pm_c1")
            #expect(calls[0]["handshake"]?.stringValue == apple.callHandshake)
            #expect(calls[0]["count"]?.int64Value == 2)
            #expect(calls[1]["card_id"]?.stringValue == "pm-missing")
            #expect(calls[1]["handshake"]?.stringValue == google.callHandshake)
            #expect(calls[1]["count"]?.int64Value == 1)
            #expect(calls[2]["card_id"]?.stringValue == "pm_c2")
            #expect(harness.simulator.calls.count == 3)

            let reset = try await harness.send("POST", "/_sim/reset")
            #expect(reset.status == 204)
            #expect(try await harness.calls().isEmpty)
            #expect(try await harness.imprintTokens("pm_c1").isEmpty)
            // The nonce table was reset too.
            #expect(try await harness.imprint("pm_c1", "apple_pay", apple.requestFields).status == 200)
        }

        /// The wallet state: each token names the handshake whose call made it, as the call log
        /// does, and Imprint's state query reports the same reference.
        @Test func walletStateNamesTheHandshakeBehindEachToken() async throws {
            let harness = try SimulatorHarness()
            let device = try SimulatedDevice()
            let apple = try device.appleHandshake()
            #expect(try await harness.imprint("pm_w1", "apple_pay", apple.requestFields).status == 200)
            let second = try device.appleHandshake()
            #expect(try await harness.imprint("pm_w1", "apple_pay", second.requestFields).status == 409, "the card is already there")
            let wallet = try SimulatorHarness.json(try await harness.send("GET", "/_sim/wallet"))["tokens"]?.arrayValue ?? []
            #expect(wallet.count == 1)
            #expect(wallet.first?["card_id"]?.stringValue == "pm_w1" && wallet.first?["wallet"]?.stringValue == "apple_pay")
            #expect(wallet.first?["handshake"]?.stringValue == apple.callHandshake)
            #expect(wallet.first?["device_ref"]?.stringValue == apple.deviceRef)
            let tokens = try await harness.imprintTokens("pm_w1")
            #expect(tokens.map { $0["handshake_ref"]?.stringValue } == [apple.callHandshake])
            #expect(try await harness.send("POST", "/_sim/wallet").status == 405)
        }

        @Test func handshakeKeysFollowTheDocumentedFormulas() throws {
            let nonce = Crypto.base64Encode([1, 2, 3, 4])
            #expect(SimulatorCall.appleHandshake(nonce: nonce) == Crypto.hex(Crypto.sha256([1, 2, 3, 4])))
            // echo -n 'w1d1s1' | sha256sum
            #expect(SimulatorCall.googleHandshake(walletID: "w1", deviceID: "d1", serverSessionID: "s1")
                        == Crypto.hex(Crypto.sha256(utf8: "w1d1s1")))
            #expect(SimulatorCall.googleHandshake(walletID: "w1", deviceID: "d1", serverSessionID: nil)
                        == Crypto.hex(Crypto.sha256(utf8: "w1d1")))
        }

        @Test func recordCallsCanBeTurnedOff() async throws {
            let harness = try SimulatorHarness(profile: SimulatorProfile(recordCalls: false))
            _ = try await harness.imprint("pm_1", "google_pay", try SimulatedDevice().googleHandshake().requestFields(legacy: true))
            #expect(try await harness.calls().isEmpty)
        }

        @Test func profileReplacementAtRunTimeStartsAndEndsAnOutage() async throws {
            let harness = try SimulatorHarness()
            let device = try SimulatedDevice()
            #expect(try await harness.imprint("pm_p1", "google_pay", device.googleHandshake().requestFields(legacy: true)).status == 200)
            let outage = try await harness.send("POST", "/_sim/profile", body: Array(#"{"all":{"error_rates":{"503":1}}}"#.utf8))
            #expect(outage.status == 200)
            for index in 0..<5 {
                let response = try await harness.imprint("pm_p\(index)", "google_wallet", device.googleHandshake().requestFields())
                #expect(response.status == 503)
                #expect(try SimulatorHarness.imprintCode(response) == "service_unavailable")
            }
            #expect(try await harness.imprintTokens("pm_p2").isEmpty)
            let current = try SimulatorHarness.json(try await harness.send("GET", "/_sim/profile"))
            #expect(current["all"]?["error_rates"]?["503"]?.int64Value == 1)
            let over = try await harness.send("POST", "/_sim/profile", body: Array(#"{"all":{"error_rates":{"503":0}}}"#.utf8))
            #expect(over.status == 200)
            #expect(try await harness.imprint("pm_p9", "google_wallet", device.googleHandshake().requestFields()).status == 200)
        }

        @Test func profileRulesPerIssuerAndRateLimits() async throws {
            let profile = try SimulatorProfile(json: Array(#"{"seed":7,"issuers":{"imprint":{"error_rates":{"429":1},"retry_after_seconds":3}}}"#.utf8))
            let harness = try SimulatorHarness(profile: profile)
            let response = try await harness.imprint("pm_1", "google_pay", try SimulatedDevice().googleHandshake().requestFields(legacy: true))
            #expect(response.status == 429)
            #expect(response.header("Retry-After") == "3")
            #expect(try SimulatorHarness.imprintCode(response) == "rate_limited")
            // Magic cards ignore the profile.
            let magic = try await harness.imprint("pm-inactive", "google_pay", try SimulatedDevice().googleHandshake().requestFields(legacy: true))
            #expect(magic.status == 422)
        }

        @Test func badProfilesAreRejectedWithTheKeyPath() async throws {
            let harness = try SimulatorHarness()
            let cases = [
                #"{"all":{"latency":{"distribution":"gamma"}}}"#,
                #"{"all":{"error_rates":{"503":0.8,"504":0.5}}}"#,
                #"{"issuers":{"visa":{}}}"#,
                #"{"programs":{"p":{"issuer":"dcs","api_key":"k"}}}"#,
                #"{"colour":"blue"}"#,
                "not json",
            ]
            for text in cases {
                let response = try await harness.send("POST", "/_sim/profile", body: Array(text.utf8))
                #expect(response.status == 400, "\(text)")
                #expect(try SimulatorHarness.json(response)["error"]?["message"]?.stringValue?.isEmpty == false)
            }
            #expect(throws: SimulatorError.self) { try SimulatorProfile(json: Array(#"{"all":{"latency":{"distribution":"uniform","min_ms":5}}}"#.utf8)) }
        }

        @Test func profileProgramsAddCredentials() async throws {
            let profile = try SimulatorProfile(json: Array(#"""
                {"programs":{"acme-imprint":{"issuer":"imprint","api_key":"acme-key","auth_header":"X-Api-Key"}}}
                """#.utf8))
            let harness = try SimulatorHarness(profile: profile)
            let fields = try SimulatedDevice().googleHandshake().requestFields(legacy: true)
            let custom = try await harness.send("POST", "/imprint/v2/payment_methods/pm_1/provision/google_pay",
                                                headers: [HTTPHeader(name: "X-Api-Key", value: "acme-key")], json: .object(fields))
            #expect(custom.status == 200)
            // Cards are per program: the same card id under the demo program is another card.
            #expect(try await harness.imprint("pm_1", "google_pay", fields).status == 200)
            #expect(try await harness.imprint("pm_1", "google_pay", fields, key: "acme-key").status == 401)
            let listed = try SimulatorHarness.json(try await harness.send("GET", "/_sim/profile"))
            #expect(listed["known_programs"]?["acme-imprint"]?.stringValue == "imprint")
            #expect(listed["known_programs"]?["demo-dcs"]?.stringValue == "dcs")
            #expect(listed["programs"] == nil)
            #expect(!String(decoding: JSONWriter.encode(listed), as: UTF8.self).contains("acme-key"))
        }

        @Test func unknownEndpointsAndMethods() async throws {
            let harness = try SimulatorHarness()
            #expect(try await harness.send("GET", "/nowhere").status == 404)
            #expect(try await harness.send("GET", "/_sim/reset").status == 405)
            #expect(try await harness.send("GET", "/imprint/v2/payment_methods/pm_1/provision/apple_pay").status == 405)
        }
    }
}

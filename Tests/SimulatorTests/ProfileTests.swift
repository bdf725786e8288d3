import Contract
import HTTP
import Simulator
import Testing

extension SimulatorTests {
    @Suite(.timeLimit(.minutes(5))) struct Profiles {
        static var configDirectory: String {
            var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
            parts.removeLast(3)  // Tests/SimulatorTests/ProfileTests.swift
            return parts.joined(separator: "/") + "/Config"
        }

        @Test func exampleProfilesLoad() throws {
            let example = try SimulatorProfile.load(path: Self.configDirectory + "/simulator-profile.json")
            #expect(example.seed == 42)
            #expect(example.rule(for: .dcs).latency == .fixed(milliseconds: 120))
            #expect(example.rule(for: .imprint).latency == .uniform(minimumMilliseconds: 20, maximumMilliseconds: 80))
            #expect(example.effectivePrograms.contains { $0.name == "acme-dcs" && $0.apiSecret?.revealed == "acme-dcs-secret" })
            #expect(example.effectivePrograms.contains { $0.name == "demo-imprint" })
            let heavy = try SimulatorProfile.load(path: Self.configDirectory + "/simulator-profile-heavy-tail.json")
            #expect(heavy.recordCalls == false)
            #expect(heavy.rule(for: .imprint).tail == LatencyTail(probability: 0.02, milliseconds: 8000))
            #expect(heavy.rule(for: .worldpay).unavailableRate == 0.005)
            #expect(heavy.rule(for: .worldpay).hangRate == 0)
            // The written form reads back to the same rules.
            let reread = try SimulatorProfile(json: JSONWriter.encode(heavy.jsonValue()))
            #expect(reread.allIssuers == heavy.allIssuers)
            #expect(reread.issuerRules == heavy.issuerRules)
            #expect(throws: SimulatorError.self) { try SimulatorProfile.load(path: Self.configDirectory + "/no-such-profile.json") }
        }

        static func statuses(_ harness: SimulatorHarness, count: Int) async throws -> [Int] {
            var statuses: [Int] = []
            let device = try SimulatedDevice()
            for index in 0..<count {
                statuses.append(try await harness.imprint("pm_d\(index)", "google_pay", device.googleHandshake().requestFields(legacy: true)).status)
            }
            return statuses
        }

        @Test func seededProfilesRepeatTheirDraws() async throws {
            let profile = SimulatorProfile(seed: 7, allIssuers: LoadRule(unavailableRate: 0.5))
            let first = try SimulatorHarness(profile: profile)
            let second = try SimulatorHarness(profile: profile)
            let a = try await Self.statuses(first, count: 24)
            let b = try await Self.statuses(second, count: 24)
            #expect(a == b)
            #expect(a.contains(200) && a.contains(503))
            first.simulator.reset()
            #expect(try await Self.statuses(first, count: 24) == a)
        }

        @Test func latencyRulesDelayAnswers() async throws {
            let profile = SimulatorProfile(issuerRules: [.imprint: LoadRule(latency: .fixed(milliseconds: 120))])
            let harness = try SimulatorHarness(profile: profile)
            let device = try SimulatedDevice()
            var start = Timing.nowMs()
            #expect(try await harness.imprint("pm_l1", "google_pay", device.googleHandshake().requestFields(legacy: true)).status == 200)
            #expect(Timing.nowMs() - start >= 120)
            // Other issuers keep the (immediate) default rule. (Checked on the rule, not with a clock:
            // an upper bound on elapsed time fails on a busy machine.)
            #expect(profile.rule(for: .dcs).latency == .immediate)
            #expect(try await harness.dcs("/card/v2/google-bind-wallet", DCS.googleV2(card: "c_l")).status == 200)
            // A tail with probability 1 replaces the draw.
            harness.simulator.replaceProfile(SimulatorProfile(allIssuers: LoadRule(latency: .logNormal(medianMilliseconds: 1, sigma: 0.1,
                                                                                                          maximumMilliseconds: 5),
                                                                                   tail: LatencyTail(probability: 1, milliseconds: 150))))
            start = Timing.nowMs()
            #expect(try await harness.dcs("/card/v2/google-bind-wallet", DCS.googleV2(card: "c_t")).status == 200)
            #expect(Timing.nowMs() - start >= 150)
        }

        @Test func injectedFaultRowsPerIssuer() async throws {
            let harness = try SimulatorHarness(profile: SimulatorProfile(issuerRules: [
                .imprint: LoadRule(gatewayTimeoutRate: 1),
                .gnosis: LoadRule(rateLimitedRate: 1, retryAfterSeconds: 4),
                .worldpay: LoadRule(rateLimitedRate: 1, retryAfterSeconds: 5),
            ]))
            let device = try SimulatedDevice()
            let timeout = try await harness.imprint("pm_f", "google_wallet", device.googleHandshake().requestFields())
            #expect(timeout.status == 504)
            #expect(timeout.body.isEmpty)
            #expect(try await harness.imprintTokens("pm_f").isEmpty)
            let gnosis = try await harness.gnosis("card_f", Gnosis.fields(try device.appleHandshake()))
            #expect(gnosis.status == 429)
            #expect(gnosis.header("Retry-After") == "4")
            #expect(try SimulatorHarness.json(gnosis)["code"]?.stringValue == "rate_limited")
            let worldpay = try await Worldpay.authorize(harness, Worldpay.payment("ref-f"))
            #expect(worldpay.status == 429)
            #expect(worldpay.header("Retry-After") == "5")
            #expect(try SimulatorHarness.json(worldpay)["errorName"]?.stringValue == "tooManyRequests")
            #expect(try await Worldpay.lastEvent(harness, "ref-f").status == 404)
            harness.simulator.replaceProfile(SimulatorProfile(allIssuers: LoadRule(unavailableRate: 1)))
            let unavailable = try await Worldpay.authorize(harness, Worldpay.payment("ref-f"))
            #expect(unavailable.status == 503)
            #expect(try SimulatorHarness.json(unavailable)["errorName"]?.stringValue == "serviceUnavailable")
            #expect(harness.simulator.profile.allIssuers.unavailableRate == 1)
        }

        @Test func hangRateHoldsTheAnswerAndStopFreesIt() async throws {
            let harness = try SimulatorHarness(profile: SimulatorProfile(allIssuers: LoadRule(hangRate: 1)))
            let request = HTTPClientRequest(method: "POST", url: harness.base + "/imprint/v2/payment_methods/pm_h/provision/google_pay",
                                            headers: SimulatorHarness.bearer("sim-imprint-key"),
                                            body: JSONWriter.encode(.object(try SimulatedDevice().googleHandshake().requestFields(legacy: true))),
                                            timeoutMs: 5_000)
            async let pending = harness.client.execute(request)
            // Stop only once the call has arrived (the simulator records it on arrival), not after a guess.
            var arrived = false
            for _ in 0..<1_000 where !arrived {
                arrived = harness.simulator.calls.contains { $0.cardID == "pm_h" }
                if !arrived { try await Task.sleep(for: .milliseconds(5)) }
            }
            try #require(arrived, "the hanging call never reached the simulator")
            harness.simulator.stop()
            guard case .success(let response) = await pending else {
                Issue.record("stopping the simulator should answer the hanging call")
                return
            }
            #expect(response.status == 503)
        }

        @Test func repeatProvisioningCanBeAllowed() async throws {
            let harness = try SimulatorHarness(profile: SimulatorProfile(conflictOnRepeatProvisioning: false))
            let device = try SimulatedDevice()
            for _ in 0..<2 {
                #expect(try await harness.imprint("pm_same", "apple_pay", try device.appleHandshake().requestFields).status == 200)
            }
            #expect(try await harness.imprintTokens("pm_same").count == 2)
        }

        @Test func freshEphemeralKeysWhenReuseIsOne() async throws {
            let harness = try SimulatorHarness(profile: SimulatorProfile(appleEphemeralKeyReuse: 1))
            let device = try SimulatedDevice()
            var keys: Set<String> = []
            for index in 0..<3 {
                let handshake = try device.appleHandshake()
                let body = try SimulatorHarness.json(try await harness.imprint("pm_e\(index)", "apple_pay", handshake.requestFields))
                let payload = try #require(body["provisioning_payload"])
                keys.insert(try #require(payload["ephemeral_public_key"]?.stringValue))
                let card = try ApplePassDecryptor.decryptJSON(encryptedPassData: try #require(payload["encrypted_pass_data"]?.stringValue),
                                                              ephemeralPublicKey: try #require(payload["ephemeral_public_key"]?.stringValue),
                                                              leafPrivateKey: handshake.leafPrivateKey)
                #expect(card["cardId"]?.stringValue == "pm_e\(index)")
            }
            #expect(keys.count == 3)
        }
    }
}

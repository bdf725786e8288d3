import Contract
import HTTP
import Simulator
import Testing

extension SimulatorTests {
    @Suite(.timeLimit(.minutes(5))) struct DCS {
        static func appleFields(_ handshake: SimulatedAppleHandshake, user: String = "u_1", mantissa: String? = "4242") -> [String: JSONValue] {
            var fields: [String: JSONValue] = [
                "externalUserId": .string(user),
                "applePublicCertificates": .array(handshake.certificates.map(JSONValue.string)),
                "appleNonce": .string(handshake.nonce),
                "appleNonceSignature": .string(handshake.nonceSignature),
            ]
            if let mantissa { fields["cardMantissa"] = .string(mantissa) }
            return fields
        }

        static func googleV2(card: String, user: String = "u_1", wallet: String? = "3a5f9c21e8b74d6f", device: String? = "9b1c7e04f2a8")
            -> [String: JSONValue] {
            var fields: [String: JSONValue] = ["externalUserId": .string(user), "cardId": .string(card)]
            if let wallet { fields["clientCustomerId"] = .string(wallet) }
            if let device { fields["deviceId"] = .string(device) }
            return fields
        }

        @Test func fixedSignatureVector() {
            // python3 -c "import hmac,hashlib; print(hmac.new(b'sim-dcs-secret',
            //   b'sim-dcs-key'+b'1764460800000'+b'n-0001'+b'{\"externalUserId\":\"u_1\"}', hashlib.sha256).hexdigest())"
            // (openssl dgst -sha256 -hmac sim-dcs-secret agrees)
            let signature = DCSSignature.sign(secret: "sim-dcs-secret", apiKey: "sim-dcs-key", timestamp: "1764460800000",
                                              nonce: "n-0001", body: Array(#"{"externalUserId":"u_1"}"#.utf8))
            #expect(signature == "8c1420062020c87e0521b40eb5889d2dffca9dccffea98bb74b1d982a6592b33")
        }

        @Test func appleBindSuccessShapeAndPayloadDecrypts() async throws {
            let harness = try SimulatorHarness()
            let handshake = try SimulatedDevice().appleHandshake()
            let response = try await harness.dcs("/card/v1/apple-bind-wallet", Self.appleFields(handshake))
            #expect(response.status == 200)
            let body = try SimulatorHarness.json(response)
            #expect(body["code"]?.stringValue == "SYS_SUCCESS")
            #expect(body["message"]?.stringValue == "")
            #expect(body["messageDetail"]?.isNull == true)
            let data = try #require(body["data"]?.objectValue)
            #expect(Set(data.keys) == ["encryptedPassData", "activationData", "ephemeralPublicKey", "vCardID"])
            #expect(data["vCardID"]?.stringValue?.count == 42)
            for key in ["encryptedPassData", "activationData", "ephemeralPublicKey"] {
                let value = try #require(data[key]?.stringValue)
                #expect(value.count <= 8192)
                #expect(Crypto.base64Decode(value) != nil)
            }
            let card = try ApplePassDecryptor.decryptJSON(encryptedPassData: try #require(data["encryptedPassData"]?.stringValue),
                                                          ephemeralPublicKey: try #require(data["ephemeralPublicKey"]?.stringValue),
                                                          leafPrivateKey: handshake.leafPrivateKey)
            #expect(card["primaryAccountSuffix"]?.stringValue == "4242")
            #expect(card["nonce"]?.stringValue == handshake.nonce)
        }

        @Test func googleBindV2AndV1() async throws {
            let harness = try SimulatorHarness()
            let v2 = try await harness.dcs("/card/v2/google-bind-wallet", Self.googleV2(card: "card_9"))
            #expect(v2.status == 200)
            let v2Body = try SimulatorHarness.json(v2)
            #expect(v2Body["code"]?.stringValue == "SYS_SUCCESS")
            let data = try #require(v2Body["data"]?.objectValue)
            #expect(Set(data.keys) == ["last4", "opaquePaymentCard", "vCardID"])
            #expect(data["last4"]?.stringValue?.count == 4)
            #expect(data["vCardID"]?.stringValue?.count == 42)
            #expect((data["opaquePaymentCard"]?.stringValue?.count ?? 0) > 500)

            let v1 = try await harness.dcs("/card/v1/google-bind-wallet", ["externalUserId": .string("u_7"), "cardMantissa": .string("1234"),
                                                                           "deviceId": .string("dev-7")])
            #expect(try SimulatorHarness.dcsCode(v1) == "SYS_SUCCESS")
            #expect(try SimulatorHarness.json(v1)["data"]?["last4"]?.stringValue == "1234")
            // Only externalUserId is required in V1.
            let minimal = try await harness.dcs("/card/v1/google-bind-wallet", ["externalUserId": .string("u_8")])
            #expect(try SimulatorHarness.dcsCode(minimal) == "SYS_SUCCESS")
        }

        @Test func signatureTimestampAndNonceAreChecked() async throws {
            let harness = try SimulatorHarness()
            let fields = Self.googleV2(card: "card_s")
            let body = JSONWriter.encode(.object(fields))
            var tampered = DCSSignature.headers(apiKey: "sim-dcs-key", secret: "sim-dcs-secret", body: body)
            tampered[3].value = DCSSignature.sign(secret: "wrong-secret", apiKey: "sim-dcs-key", timestamp: tampered[1].value,
                                                  nonce: tampered[2].value, body: body)
            let wrongSign = try await harness.dcs("/card/v2/google-bind-wallet", fields, headers: tampered)
            #expect(wrongSign.status == 401)
            #expect(try SimulatorHarness.dcsCode(wrongSign) == "SIGN_INVALID")

            let upper = DCSSignature.headers(apiKey: "sim-dcs-key", secret: "sim-dcs-secret", body: body)
            var uppercased = upper
            uppercased[3].value = upper[3].value.uppercased()
            #expect(try SimulatorHarness.dcsCode(try await harness.dcs("/card/v2/google-bind-wallet", fields, headers: uppercased)) == "SIGN_INVALID")

            let stale = try await harness.dcs("/card/v2/google-bind-wallet", fields, timestampMs: Self.nowMs() - 6_000)
            #expect(stale.status == 401)
            #expect(try SimulatorHarness.dcsCode(stale) == "TIMESTAMP_EXPIRED")
            let future = try await harness.dcs("/card/v2/google-bind-wallet", fields, timestampMs: Self.nowMs() + 6_000)
            #expect(try SimulatorHarness.dcsCode(future) == "TIMESTAMP_EXPIRED")

            let first = try await harness.dcs("/card/v2/google-bind-wallet", fields, nonce: "fixed-nonce-1")
            #expect(try SimulatorHarness.dcsCode(first) == "SYS_SUCCESS")
            let replay = try await harness.dcs("/card/v2/google-bind-wallet", Self.googleV2(card: "card_t"), nonce: "fixed-nonce-1")
            #expect(replay.status == 401)
            #expect(try SimulatorHarness.dcsCode(replay) == "AUTH_FAILED")

            let unknownKey = try await harness.dcs("/card/v2/google-bind-wallet", fields, apiKey: "nobody", secret: "x")
            #expect(unknownKey.status == 401)
            #expect(try SimulatorHarness.dcsCode(unknownKey) == "AUTH_FAILED")
            let unsigned = try await harness.dcs("/card/v2/google-bind-wallet", fields, headers: [])
            #expect(try SimulatorHarness.dcsCode(unsigned) == "AUTH_FAILED")
        }

        @Test("X-DAPI-TIMESTAMP at the ends of Int64 is answered 401 TIMESTAMP_EXPIRED, not a trap")
        func extremeTimestampsAreExpired() async throws {
            let harness = try SimulatorHarness()
            for timestamp in [Int64.min, Int64.max, Int64.min + 1] {
                let answer = try await harness.dcs("/card/v2/google-bind-wallet", Self.googleV2(card: "card_x"), timestampMs: timestamp)
                #expect(answer.status == 401, "\(timestamp)")
                #expect(try SimulatorHarness.dcsCode(answer) == "TIMESTAMP_EXPIRED", "\(timestamp)")
            }
        }

        static func nowMs() -> Int64 {
            Int64(Timing.nowWallMs())
        }

        @Test(arguments: [
            ("card-missing", "CARD_NOT_FOUND"),
            ("card-foreign", "CARD_NOT_FOUND"),
            ("card-inactive", "CARD_STATUS_INVALID"),
            ("card-provisioned", "WALLET_ALREADY_BOUND"),
        ])
        func cardErrorRows(card: String, code: String) async throws {
            let harness = try SimulatorHarness()
            let v2 = try await harness.dcs("/card/v2/google-bind-wallet", Self.googleV2(card: card))
            #expect(v2.status == 200)
            #expect(try SimulatorHarness.dcsCode(v2) == code)
            #expect(try SimulatorHarness.json(v2)["data"]?.isNull == true)
            // V1 endpoints take the suffix from externalUserId.
            let user = "u" + card.dropFirst(4)
            let apple = try await harness.dcs("/card/v1/apple-bind-wallet", Self.appleFields(try SimulatedDevice().appleHandshake(), user: user))
            #expect(try SimulatorHarness.dcsCode(apple) == code)
        }

        @Test func deviceNonceAndParameterRows() async throws {
            let harness = try SimulatorHarness()
            let ineligible = try await harness.dcs("/card/v2/google-bind-wallet", Self.googleV2(card: "c1", device: "pixel-ineligible"))
            #expect(try SimulatorHarness.dcsCode(ineligible) == "DEVICE_NOT_ELIGIBLE")
            let appleIneligible = try await harness.dcs("/card/v1/apple-bind-wallet",
                                                        Self.appleFields(try SimulatedDevice(name: "watch-ineligible").appleHandshake()))
            #expect(try SimulatorHarness.dcsCode(appleIneligible) == "DEVICE_NOT_ELIGIBLE")

            let handshake = try SimulatedDevice().appleHandshake()
            #expect(try SimulatorHarness.dcsCode(try await harness.dcs("/card/v1/apple-bind-wallet", Self.appleFields(handshake))) == "SYS_SUCCESS")
            let reused = try await harness.dcs("/card/v1/apple-bind-wallet", Self.appleFields(handshake, user: "u_2"))
            #expect(reused.status == 200)
            #expect(try SimulatorHarness.dcsCode(reused) == "NONCE_USED")

            let invalid: [(String, [String: JSONValue])] = [
                ("/card/v2/google-bind-wallet", Self.googleV2(card: "c1", wallet: "x")),
                ("/card/v2/google-bind-wallet", Self.googleV2(card: "c1", wallet: String(repeating: "w", count: 37))),
                ("/card/v2/google-bind-wallet", Self.googleV2(card: "c1", device: "d")),
                ("/card/v2/google-bind-wallet", Self.googleV2(card: "c1", device: String(repeating: "d", count: 25))),
                ("/card/v2/google-bind-wallet", ["externalUserId": .string("u_1")]),
                ("/card/v1/google-bind-wallet", ["cardMantissa": .string("1234")]),
                ("/card/v1/google-bind-wallet", ["externalUserId": .string("u_1"), "cardMantissa": .string("12a4")]),
                ("/card/v1/apple-bind-wallet", Self.appleFields(try SimulatedDevice().appleHandshake(), mantissa: "424")),
            ]
            for (endpoint, fields) in invalid {
                let response = try await harness.dcs(endpoint, fields)
                #expect(response.status == 200)
                #expect(try SimulatorHarness.dcsCode(response) == "PARAM_ERROR", "\(fields)")
                #expect(try SimulatorHarness.json(response)["messageDetail"]?.stringValue?.isEmpty == false)
            }
            // Boundaries are accepted.
            let edges = Self.googleV2(card: "c2", wallet: String(repeating: "w", count: 36), device: String(repeating: "d", count: 24))
            #expect(try SimulatorHarness.dcsCode(try await harness.dcs("/card/v2/google-bind-wallet", edges)) == "SYS_SUCCESS")
        }

        @Test func gatewayFaultsUseHTTPStatuses() async throws {
            let harness = try SimulatorHarness()
            let flaky = try await harness.dcs("/card/v2/google-bind-wallet", Self.googleV2(card: "card-flaky"))
            #expect(flaky.status == 503)
            #expect(try SimulatorHarness.dcsCode(flaky) == "SYS_ERROR")
            #expect(try SimulatorHarness.dcsCode(try await harness.dcs("/card/v2/google-bind-wallet", Self.googleV2(card: "card-flaky"))) == "SYS_SUCCESS")
            let timeout = try await harness.dcs("/card/v2/google-bind-wallet", Self.googleV2(card: "card-timeout-unapplied"))
            #expect(timeout.status == 504)
            harness.simulator.replaceProfile(SimulatorProfile(issuerRules: [.dcs: LoadRule(rateLimitedRate: 1, retryAfterSeconds: 2)]))
            let limited = try await harness.dcs("/card/v2/google-bind-wallet", Self.googleV2(card: "card_r"))
            #expect(limited.status == 429)
            #expect(limited.header("Retry-After") == "2")
            #expect(try SimulatorHarness.dcsCode(limited) == "SYS_BUSY")
            let calls = try await harness.calls()
            #expect(calls.first { $0["card_id"]?.stringValue == "card-flaky" }?["count"]?.int64Value == 2)
            #expect(calls.first?["issuer"]?.stringValue == "dcs")
        }
    }
}

import Contract
import HTTP
import Simulator
import Testing

extension SimulatorTests {
    @Suite(.timeLimit(.minutes(5))) struct Imprint {
        @Test func applePaySuccessDecryptsToCardDataAndShowsInStateQuery() async throws {
            let harness = try SimulatorHarness()
            let device = try SimulatedDevice()
            let handshake = try device.appleHandshake()
            let response = try await harness.imprint("pm_apple1", "apple_pay", handshake.requestFields)
            #expect(response.status == 200)
            let body = try SimulatorHarness.json(response)
            #expect(body["wallet"]?.stringValue == "apple_pay")
            let payload = try #require(body["provisioning_payload"]?.objectValue)
            #expect(Set(payload.keys) == ["activation_data", "encrypted_pass_data", "ephemeral_public_key"])
            let ephemeral = try #require(payload["ephemeral_public_key"]?.stringValue)
            let point = try #require(Crypto.base64Decode(ephemeral))
            #expect(point.count == 65 && point[0] == 0x04)
            let activation = try #require(payload["activation_data"]?.stringValue)
            #expect(Crypto.base64Decode(activation)?.count == 64)
            let sealed = try #require(payload["encrypted_pass_data"]?.stringValue)
            let card = try ApplePassDecryptor.decryptJSON(encryptedPassData: sealed, ephemeralPublicKey: ephemeral,
                                                          leafPrivateKey: handshake.leafPrivateKey)
            #expect(card["cardId"]?.stringValue == "pm_apple1")
            #expect(card["nonce"]?.stringValue == handshake.nonce)
            #expect(card["nonceSignature"]?.stringValue == handshake.nonceSignature)
            #expect(card["primaryAccountSuffix"]?.stringValue?.count == 4)
            #expect(card["cardholderName"]?.stringValue != nil)
            // Another key cannot open it.
            let stranger = try device.appleHandshake(freshLeaf: true)
            #expect(throws: CryptoError.self) {
                try ApplePassDecryptor.decrypt(encryptedPassData: sealed, ephemeralPublicKey: ephemeral,
                                               leafPrivateKey: stranger.leafPrivateKey)
            }
            let tokens = try await harness.imprintTokens("pm_apple1")
            #expect(tokens.count == 1)
            #expect(tokens.first?["device_ref"]?.stringValue == handshake.deviceRef)
            #expect(tokens.first?["wallet"]?.stringValue == "apple_pay")
            #expect(tokens.first?["status"]?.stringValue == "ACTIVE")
            #expect(tokens.first?["id"]?.stringValue?.hasPrefix("wt_") == true)
            #expect(RFC3339.parse(tokens.first?["created_at"]?.stringValue ?? "") != nil)
        }

        @Test func googleWalletReturnsTheOPCOnlyWhenRequested() async throws {
            let harness = try SimulatorHarness()
            let device = try SimulatedDevice()
            let requested = try await harness.imprint("pm_g1", "google_wallet", device.googleHandshake(opcRequested: true).requestFields())
            #expect(requested.status == 200)
            let body = try SimulatorHarness.json(requested)
            #expect(body["wallet"] == nil)
            let payload = try #require(body["provisioning_payload"]?.objectValue)
            #expect(Set(payload.keys) == ["opaque_payment_card", "google_provisioning_payload"])
            #expect(payload["opaque_payment_card"]?.stringValue?.hasPrefix("eyJraWQiOi") == true)
            let opcText = try #require(payload["google_provisioning_payload"]?.stringValue)
            let opc = try #require(Crypto.base64Decode(opcText))
            #expect(String(decoding: opc, as: UTF8.self).hasPrefix("eyJraWQiOi"))

            let plain = try await harness.imprint("pm_g2", "google_wallet", device.googleHandshake(opcRequested: false).requestFields())
            #expect(plain.status == 200)
            let plainPayload = try #require(try SimulatorHarness.json(plain)["provisioning_payload"]?.objectValue)
            #expect(Set(plainPayload.keys) == ["opaque_payment_card"])

            let tokens = try await harness.imprintTokens("pm_g1")
            #expect(tokens.first?["device_ref"]?.stringValue == Crypto.hex(Crypto.sha256(utf8: device.name)))
        }

        @Test func googlePayLegacyShape() async throws {
            let harness = try SimulatorHarness()
            let device = try SimulatedDevice()
            let response = try await harness.imprint("pm_l1", "google_pay", device.googleHandshake(opcRequested: false).requestFields(legacy: true))
            #expect(response.status == 200)
            let body = try SimulatorHarness.json(response)
            #expect(body["wallet"]?.stringValue == "google_pay")
            #expect(body["provisioning_payload"]?["network"]?.stringValue == "VISA")
            #expect(body["provisioning_payload"]?["wallet_type"]?.stringValue == "GOOGLE_PAY")
            #expect(body["provisioning_payload"]?["opaque_payment_card"]?.stringValue?.isEmpty == false)
        }

        @Test func credentialsAreRequired() async throws {
            let harness = try SimulatorHarness()
            let fields = try SimulatedDevice().googleHandshake().requestFields()
            let wrong = try await harness.imprint("pm_1", "google_wallet", fields, key: "not-a-key")
            #expect(wrong.status == 401)
            #expect(try SimulatorHarness.imprintCode(wrong) == "unauthenticated")
            let missing = try await harness.send("POST", "/imprint/v2/payment_methods/pm_1/provision/google_wallet", json: .object(fields))
            #expect(missing.status == 401)
            // Another issuer's key is not an Imprint key.
            let gnosisKey = try await harness.imprint("pm_1", "google_wallet", fields, key: "sim-gnosis-token")
            #expect(gnosisKey.status == 401)
        }

        @Test(arguments: [
            ("pm-missing", 404, "payment_method_not_found"),
            ("pm-foreign", 404, "payment_method_not_found"),
            ("pm-inactive", 422, "payment_method_not_active"),
            ("pm-provisioned", 409, "already_provisioned"),
        ])
        func magicCardErrors(card: String, status: Int, code: String) async throws {
            let harness = try SimulatorHarness()
            let device = try SimulatedDevice()
            let apple = try await harness.imprint(card, "apple_pay", try device.appleHandshake().requestFields)
            #expect(apple.status == status)
            #expect(try SimulatorHarness.imprintCode(apple) == code)
            let google = try await harness.imprint(card, "google_wallet", device.googleHandshake().requestFields())
            #expect(google.status == status)
            #expect(try SimulatorHarness.imprintCode(google) == code)
            if status != 404 { #expect(try await harness.imprintTokens(card).isEmpty) }
        }

        @Test func ineligibleDevicesAreRejected() async throws {
            let harness = try SimulatorHarness()
            let device = try SimulatedDevice(name: "pixel-ineligible")
            let google = try await harness.imprint("pm_1", "google_wallet", device.googleHandshake().requestFields())
            #expect(google.status == 422)
            #expect(try SimulatorHarness.imprintCode(google) == "device_ineligible")
            var walletIneligible = try SimulatedDevice().googleHandshake(opcRequested: false)
            walletIneligible.walletID = "w-ineligible"
            let legacy = try await harness.imprint("pm_1", "google_pay", walletIneligible.requestFields(legacy: true))
            #expect(legacy.status == 422)
            let apple = try await harness.imprint("pm_1", "apple_pay", try device.appleHandshake().requestFields)
            #expect(apple.status == 422)
            #expect(try SimulatorHarness.imprintCode(apple) == "device_ineligible")
        }

        @Test func unsupportedWalletPath() async throws {
            let harness = try SimulatorHarness()
            let response = try await harness.imprint("pm_1", "samsung_pay", try SimulatedDevice().googleHandshake().requestFields())
            #expect(response.status == 400)
            #expect(try SimulatorHarness.imprintCode(response) == "wallet_unsupported")
        }

        @Test func requestValidation() async throws {
            let harness = try SimulatorHarness()
            let device = try SimulatedDevice()
            let good = try device.appleHandshake()
            var fields = good.requestFields
            fields["nonce"] = .string("not base64!")
            var invalid: [[String: JSONValue]] = [fields]
            fields = good.requestFields
            fields["certificates"] = .array([.string(good.certificates[0])])
            invalid.append(fields)
            fields = good.requestFields
            fields["certificates"] = .array([.string(good.certificates[1]), .string(good.certificates[0])])
            invalid.append(fields)
            fields = good.requestFields
            fields["nonce_signature"] = .string("")
            invalid.append(fields)
            fields = good.requestFields
            fields["certificates"] = .array([.string("MIIB"), .string(good.certificates[1])])
            invalid.append(fields)
            for body in invalid {
                let response = try await harness.imprint("pm_v", "apple_pay", body)
                #expect(response.status == 400)
                #expect(try SimulatorHarness.imprintCode(response) == "invalid_request")
            }
            let noSession: [String: JSONValue] = ["wallet_id": .string("w1"), "device_id": .string("d1"), "google_opc_requested": .bool(true)]
            let blank: [String: JSONValue] = ["wallet_id": .string(" "), "device_id": .string("d1")]
            let wrongType: [String: JSONValue] = ["wallet_id": .string("w1"), "device_id": .string("d1"), "google_opc_requested": .string("yes")]
            for (wallet, body) in [("google_wallet", noSession), ("google_pay", blank), ("google_wallet", wrongType)] {
                let response = try await harness.imprint("pm_v", wallet, body)
                #expect(response.status == 400)
                #expect(try SimulatorHarness.imprintCode(response) == "invalid_request")
            }
            let notJSON = try await harness.send("POST", "/imprint/v2/payment_methods/pm_v/provision/google_pay",
                                                 headers: SimulatorHarness.bearer("sim-imprint-key"), body: Array("{oops".utf8))
            #expect(notJSON.status == 400)
            // The good handshake still works: rejected requests consumed nothing.
            #expect(try await harness.imprint("pm_v", "apple_pay", good.requestFields).status == 200)
        }

        @Test func noncesAreSingleUse() async throws {
            let harness = try SimulatorHarness()
            let handshake = try SimulatedDevice().appleHandshake()
            #expect(try await harness.imprint("pm_n1", "apple_pay", handshake.requestFields).status == 200)
            let again = try await harness.imprint("pm_n2", "apple_pay", handshake.requestFields)
            #expect(again.status == 400)
            #expect(try SimulatorHarness.imprintCode(again) == "invalid_request")
        }

        @Test func repeatProvisioningOfTheSameDeviceConflicts() async throws {
            let harness = try SimulatorHarness()
            let device = try SimulatedDevice()
            #expect(try await harness.imprint("pm_r", "apple_pay", try device.appleHandshake().requestFields).status == 200)
            let repeated = try await harness.imprint("pm_r", "apple_pay", try device.appleHandshake().requestFields)
            #expect(repeated.status == 409)
            #expect(try SimulatorHarness.imprintCode(repeated) == "already_provisioned")
            #expect(try await harness.imprint("pm_r", "apple_pay", try device.appleHandshake(freshLeaf: true).requestFields).status == 200)
            #expect(try await harness.imprintTokens("pm_r").count == 2)
        }

        @Test func timeoutAppliedLeavesATokenTimeoutUnappliedDoesNot() async throws {
            let harness = try SimulatorHarness()
            let device = try SimulatedDevice()
            let applied = try await harness.imprint("pm-timeout-applied", "apple_pay", try device.appleHandshake().requestFields)
            #expect(applied.status == 504)
            #expect(applied.body.isEmpty)
            let appliedTokens = try await harness.imprintTokens("pm-timeout-applied")
            #expect(appliedTokens.count == 1)
            #expect(appliedTokens.first?["device_ref"]?.stringValue == device.appleDeviceRef)

            let handshake = try device.appleHandshake()
            let unapplied = try await harness.imprint("pm-timeout-unapplied", "apple_pay", handshake.requestFields)
            #expect(unapplied.status == 504)
            #expect(try await harness.imprintTokens("pm-timeout-unapplied").isEmpty)
            // Nothing applied: the nonce was not consumed either.
            #expect(try await harness.imprint("pm_other", "apple_pay", handshake.requestFields).status == 200)
        }

        @Test func stateQueryNeedsCredentialsAndAKnownCard() async throws {
            let harness = try SimulatorHarness()
            let unauthenticated = try await harness.send("GET", "/imprint/v2/payment_methods/pm_1/wallet_tokens")
            #expect(unauthenticated.status == 401)
            let missing = try await harness.send("GET", "/imprint/v2/payment_methods/pm-missing/wallet_tokens",
                                                 headers: SimulatorHarness.bearer("sim-imprint-key"))
            #expect(missing.status == 404)
            #expect(try await harness.imprintTokens("pm_never").isEmpty)
        }
    }
}

import Contract
import HTTP
import Simulator
import Testing

extension SimulatorTests {
    @Suite(.timeLimit(.minutes(5))) struct Gnosis {
        static func fields(_ handshake: SimulatedAppleHandshake, deviceType: String = "iphone") -> [String: JSONValue] {
            var fields = handshake.requestFields
            fields["device_type"] = .string(deviceType)
            fields["app_version"] = .string("5.2.0")
            return fields
        }

        @Test func successShapeAndPayloadDecrypts() async throws {
            let harness = try SimulatorHarness()
            let handshake = try SimulatedDevice().appleHandshake()
            var body = Self.fields(handshake, deviceType: "apple_watch")
            body["product_type"] = .string("gp-visa-debit")
            let response = try await harness.gnosis("card_g1", body)
            #expect(response.status == 200)
            let json = try SimulatorHarness.json(response)
            let members = try #require(json.objectValue)
            #expect(Set(members.keys) == ["activation_data", "encrypted_pass_data", "ephemeral_public_key"])
            let card = try ApplePassDecryptor.decryptJSON(encryptedPassData: try #require(json["encrypted_pass_data"]?.stringValue),
                                                          ephemeralPublicKey: try #require(json["ephemeral_public_key"]?.stringValue),
                                                          leafPrivateKey: handshake.leafPrivateKey)
            #expect(card["issuer"]?.stringValue == "gnosis")
            #expect(card["cardId"]?.stringValue == "card_g1")
        }

        @Test(arguments: [
            ("g-missing", 404, "card_not_found"),
            ("g-foreign", 404, "card_not_found"),
            ("g-inactive", 422, "card_not_active"),
            ("g-provisioned", 409, "already_provisioned"),
            ("g-flaky", 503, "service_unavailable"),
        ])
        func errorRows(card: String, status: Int, code: String) async throws {
            let harness = try SimulatorHarness()
            let response = try await harness.gnosis(card, Self.fields(try SimulatedDevice().appleHandshake()))
            #expect(response.status == status)
            #expect(try SimulatorHarness.json(response)["code"]?.stringValue == code)
        }

        @Test func authenticationValidationNonceAndDevice() async throws {
            let harness = try SimulatorHarness()
            let handshake = try SimulatedDevice().appleHandshake()
            let unauthorized = try await harness.gnosis("card_1", Self.fields(handshake), token: "sim-imprint-key")
            #expect(unauthorized.status == 401)
            #expect(try SimulatorHarness.json(unauthorized)["code"]?.stringValue == "unauthorized")
            var wrongDevice = Self.fields(handshake, deviceType: "ipad")
            let badType = try await harness.gnosis("card_1", wrongDevice)
            #expect(badType.status == 400)
            #expect(try SimulatorHarness.json(badType)["code"]?.stringValue == "invalid_request")
            wrongDevice = Self.fields(handshake)
            wrongDevice["app_version"] = nil
            #expect(try await harness.gnosis("card_1", wrongDevice).status == 400)
            #expect(try await harness.gnosis("card_1", Self.fields(handshake)).status == 200)
            let reused = try await harness.gnosis("card_2", Self.fields(handshake))
            #expect(reused.status == 400)
            #expect(try SimulatorHarness.json(reused)["code"]?.stringValue == "invalid_request")
            let ineligible = try await harness.gnosis("card_3", Self.fields(try SimulatedDevice(name: "ipad-ineligible").appleHandshake()))
            #expect(ineligible.status == 422)
            #expect(try SimulatorHarness.json(ineligible)["code"]?.stringValue == "device_ineligible")
            let applied = try await harness.gnosis("card-timeout-applied", Self.fields(try SimulatedDevice().appleHandshake()))
            #expect(applied.status == 504)
            let calls = try await harness.calls()
            #expect(calls.contains { $0["issuer"]?.stringValue == "gnosis" && $0["handshake"]?.stringValue == handshake.callHandshake
                && $0["card_id"]?.stringValue == "card_1" && $0["count"]?.int64Value == 4 })
        }
    }
}

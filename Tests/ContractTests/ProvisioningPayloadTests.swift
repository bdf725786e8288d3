import Contract
import Testing

@Suite("Provisioning payloads", .timeLimit(.minutes(5)))
struct ProvisioningPayloadTests {
    private func text(_ payload: ProvisioningPayload) -> String {
        String(decoding: payload.plaintextJSON(), as: UTF8.self)
    }

    @Test func plaintextPassesValuesThroughUnchanged() throws {
        let apple = ProvisioningPayload.apple(activationData: Sensitive("YWN0aXZhdGlvbg=="),
                                              encryptedPassData: Sensitive("ZW5jcnlwdGVkUGFzcw=="),
                                              ephemeralPublicKey: Sensitive("ZXBoZW1lcmFsS2V5"))
        #expect(text(apple) == #"{"activation_data":"YWN0aXZhdGlvbg==","encrypted_pass_data":"ZW5jcnlwdGVkUGFzcw==","ephemeral_public_key":"ZXBoZW1lcmFsS2V5"}"#)
        let odd = "eyJraWQiOi\"/\\é😀\u{1}"
        let upp = ProvisioningPayload.googleWallet(opaquePaymentCard: Sensitive(odd), googleProvisioningPayload: nil)
        #expect(text(upp) == #"{"opaque_payment_card":"eyJraWQiOi\"/\\é😀\u0001"}"#)
        let decoded = try ProvisioningPayload.decode(plaintext: upp.plaintextJSON(), wallet: .googleWallet)
        #expect(decoded == upp)
        let legacy = ProvisioningPayload.googlePay(opaquePaymentCard: Sensitive("opc"), network: "VISA", walletType: "GOOGLE_PAY",
                                                   last4: "4242")
        #expect(text(legacy) == #"{"opaque_payment_card":"opc","network":"VISA","wallet_type":"GOOGLE_PAY","last4":"4242"}"#)
        #expect(try ProvisioningPayload.decode(plaintext: legacy.plaintextJSON(), wallet: .googlePay) == legacy)
        #expect(try ProvisioningPayload.decode(plaintext: apple.plaintextJSON(), wallet: .applePay) == apple)
        #expect(throws: ContractDecodingError.self) { try ProvisioningPayload.decode(plaintext: upp.plaintextJSON(), wallet: .applePay) }
    }

    @Test func appleSuccessNeedsThreeBase64Fields() {
        let good = ProvisioningPayload.apple(activationData: Sensitive("YQ=="), encryptedPassData: Sensitive("Yg=="),
                                             ephemeralPublicKey: Sensitive("Yw=="))
        #expect(good.problem(for: .applePay, googleOPCRequested: false, issuer: .imprint) == nil)
        for bad in [ProvisioningPayload.apple(activationData: Sensitive(""), encryptedPassData: Sensitive("Yg=="), ephemeralPublicKey: Sensitive("Yw==")),
                    .apple(activationData: Sensitive("YQ=="), encryptedPassData: Sensitive("not base64"), ephemeralPublicKey: Sensitive("Yw==")),
                    .apple(activationData: Sensitive("YQ=="), encryptedPassData: Sensitive("Yg=="), ephemeralPublicKey: Sensitive("Yw"))] {
            #expect(bad.problem(for: .applePay, googleOPCRequested: false, issuer: .gnosis) != nil)
        }
        #expect(good.problem(for: .googlePay, googleOPCRequested: false, issuer: .imprint) != nil)
    }

    @Test func googleWalletNeedsTheGoogleOPCWhenRequested() throws {
        let deviceOnly = ProvisioningPayload.googleWallet(opaquePaymentCard: Sensitive("opc"), googleProvisioningPayload: nil)
        #expect(deviceOnly.problem(for: .googleWallet, googleOPCRequested: false, issuer: .imprint) == nil)
        #expect(deviceOnly.problem(for: .googleWallet, googleOPCRequested: true, issuer: .imprint) != nil)
        let both = ProvisioningPayload.googleWallet(opaquePaymentCard: Sensitive("opc"), googleProvisioningPayload: Sensitive("gopc"))
        #expect(both.problem(for: .googleWallet, googleOPCRequested: true, issuer: .imprint) == nil)

        let request = try #require(Fixtures.decoded(Fixtures.googleDocument()))
        let answer = deviceOnly.answer(for: request, issuer: .imprint)
        guard case .invalidSuccessResponse = answer else {
            Issue.record("a device-token-only answer to an OPC request must be invalid")
            return
        }
        #expect(OutcomeTable.outcome(for: answer, issuer: .imprint, wallet: .googleWallet, kind: .provision).status == .failed)
        #expect(both.answer(for: request, issuer: .imprint) == .success(both))
    }

    @Test func legacyNeedsNetwork() {
        let withNetwork = ProvisioningPayload.googlePay(opaquePaymentCard: Sensitive("opc"), network: "VISA", walletType: nil, last4: nil)
        #expect(withNetwork.problem(for: .googlePay, googleOPCRequested: false, issuer: .imprint) == nil)
        let without = ProvisioningPayload.googlePay(opaquePaymentCard: Sensitive("opc"), network: nil, walletType: "GOOGLE_PAY", last4: nil)
        #expect(without.problem(for: .googlePay, googleOPCRequested: false, issuer: .imprint) != nil)
    }

    @Test func dcsFieldsAreAtMost8192Characters() {
        let limit = String(repeating: "A", count: 8192)
        let over = String(repeating: "A", count: 8188) + "AAAA"
        #expect(over.count == 8192)
        let atLimit = ProvisioningPayload.googleWallet(opaquePaymentCard: Sensitive(limit), googleProvisioningPayload: nil)
        #expect(atLimit.problem(for: .googleWallet, googleOPCRequested: false, issuer: .dcs) == nil)
        let tooLong = ProvisioningPayload.googleWallet(opaquePaymentCard: Sensitive(limit + "A"), googleProvisioningPayload: nil)
        #expect(tooLong.problem(for: .googleWallet, googleOPCRequested: false, issuer: .dcs) != nil)
        #expect(tooLong.problem(for: .googleWallet, googleOPCRequested: false, issuer: .imprint) == nil)
        let appleLong = ProvisioningPayload.apple(activationData: Sensitive(limit + "AAAA"), encryptedPassData: Sensitive("Yg=="),
                                                  ephemeralPublicKey: Sensitive("Yw=="))
        #expect(appleLong.problem(for: .applePay, googleOPCRequested: false, issuer: .dcs) != nil)
    }

    @Test func payloadRoundTripsThroughJWE() throws {
        let key = try #require(Fixtures.replyKey)
        let payload = ProvisioningPayload.apple(activationData: Sensitive("YQ=="), encryptedPassData: Sensitive("Yg=="),
                                                ephemeralPublicKey: Sensitive("Yw=="))
        let compact = try JWE.encrypt(payload.plaintextJSON(), to: try key.publicKey)
        #expect(try ProvisioningPayload.decode(plaintext: try JWE.decrypt(compact, with: key), wallet: .applePay) == payload)
    }
}

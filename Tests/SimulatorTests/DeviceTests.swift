import Contract
import Simulator
import Testing

extension SimulatorTests {
    @Suite(.timeLimit(.minutes(5))) struct Devices {
        static func request(wallet: Wallet, apple: ApplePassKitHandshake? = nil, google: GoogleWalletHandshake? = nil,
                            payment: PaymentInstruction? = nil) throws -> ProvisioningRequest {
            let reply = try ECPrivateKey.generate().publicKey
            return ProvisioningRequest(requestID: "r-1", program: "demo", kind: payment == nil ? .provision : .payment, wallet: wallet,
                                       card: CardReference(id: Sensitive("pm_1"), userID: Sensitive("u_1")), apple: apple,
                                       google: google, payment: payment, reply: ReplyKey(reply))
        }

        @Test func handshakesPassTheProjectValidator() throws {
            let device = try SimulatedDevice(name: "phone-1")
            let validator = RequestValidator()
            let apple = try device.appleHandshake()
            for issuer in [IssuerKind.imprint, .dcs, .gnosis] {
                let failure = validator.validate(try Self.request(wallet: .applePay, apple: apple.passKitHandshake()), issuer: issuer)
                #expect(failure == nil, "\(issuer): \(String(describing: failure))")
            }
            let fresh = try device.appleHandshake(freshLeaf: true)
            #expect(validator.validate(try Self.request(wallet: .applePay, apple: fresh.passKitHandshake()), issuer: .imprint) == nil)
            for opc in [true, false] {
                let google = device.googleHandshake(opcRequested: opc).walletHandshake
                #expect(validator.validate(try Self.request(wallet: .googleWallet, google: google), issuer: .imprint) == nil)
                // DCS cannot return a Google OPC, so it accepts only requests that ask for none.
                #expect((validator.validate(try Self.request(wallet: .googleWallet, google: google), issuer: .dcs) == nil) == !opc)
            }
            let payment = PaymentInstruction(transactionReference: "ref-1", amount: PaymentAmount(currency: "GBP", value: 250),
                                             walletToken: Sensitive(SimulatedDevice.applePayToken()), narrative: "Mind Palace")
            #expect(validator.validate(try Self.request(wallet: .applePay, payment: payment), issuer: .worldpay) == nil)
        }

        @Test func handshakeParts() throws {
            let device = try SimulatedDevice()
            let first = try device.appleHandshake()
            let second = try device.appleHandshake()
            #expect(first.certificates.count == 2)
            #expect(first.certificates == second.certificates)
            #expect(first.nonce != second.nonce)
            #expect(Crypto.base64Decode(first.nonce)?.count == 16)
            #expect(first.deviceRef == device.appleDeviceRef)
            #expect(first.leafCertificateDER == device.leafCertificateDER)
            // The leaf key in the handshake is the certificate's key: ECDH both ways agrees.
            let other = try ECPrivateKey.generate()
            let fromLeaf = try Crypto.p256SharedSecret(privateKey: first.leafPrivateKey, peerPublicKey: try other.uncompressedPublicPoint())
            let fromCertificate = try Crypto.p256SharedSecret(privateKey: other, peerPublicKey: first.leafCertificateDER)
            #expect(fromLeaf == fromCertificate)
            try device.rotateLeaf()
            #expect(device.appleDeviceRef != first.deviceRef)
            #expect(try device.appleHandshake().certificates[1] == first.certificates[1])

            let google = device.googleHandshake(opcRequested: true)
            #expect(google.deviceID == device.name)
            #expect(google.walletID == device.walletID)
            #expect(google.serverSessionID?.isEmpty == false)
            #expect(device.googleHandshake(opcRequested: true).serverSessionID != google.serverSessionID)
            #expect(device.googleHandshake(opcRequested: false).serverSessionID == nil)

            let token = try JSONParser().parse(SimulatedDevice.applePayToken(transactionID: "abc"))
            #expect(token["version"]?.stringValue == "EC_v1")
            #expect(token["header"]?["transactionId"]?.stringValue == "abc")
            #expect(Crypto.base64Decode(token["header"]?["ephemeralPublicKey"]?.stringValue ?? "")?.count == 91)
        }
    }
}

import Contract
import HTTP
import Issuers

/// Request and endpoint builders for the tests (values that are not secrets in a test).
enum Requests {
    static let certificates = [Sensitive("TEVBRg=="), Sensitive("SU5URVI=")]

    static func endpoint(_ kind: IssuerKind, baseURL: String = "https://issuer.example", key: String = "test-key",
                         secret: String? = nil) -> IssuerEndpoint {
        IssuerEndpoint(program: "test-\(kind.rawValue)", kind: kind, baseURL: baseURL,
                       credentials: IssuerCredentials(apiKey: Sensitive(key), apiSecret: secret.map(Sensitive.init)))
    }

    static func apple(card: String = "pm_1", nonce: String = "bm9uY2U=", userID: String? = nil, last4: String? = nil,
                      deviceType: String? = "iphone", appVersion: String? = "5.2.0", productType: String? = nil,
                      certificates: [Sensitive] = Requests.certificates) -> ProvisioningRequest {
        ProvisioningRequest(requestID: "req-apple", program: "p", wallet: .applePay,
                            card: CardReference(id: Sensitive(card), last4: last4.flatMap(CardLast4.init), userID: userID.map(Sensitive.init)),
                            apple: ApplePassKitHandshake(certificates: certificates, nonce: Sensitive(nonce),
                                                         nonceSignature: Sensitive("c2lnbmF0dXJl"), deviceType: deviceType,
                                                         appVersion: appVersion, productType: productType))
    }

    static func google(_ wallet: Wallet = .googleWallet, card: String = "pm_1", walletID: String = "3a5f9c21e8b74d6f",
                       deviceID: String = "9b1c7e04f2a8", opc: Bool = false, session: String? = nil,
                       userID: String? = nil, last4: String? = nil) -> ProvisioningRequest {
        ProvisioningRequest(requestID: "req-google", program: "p", wallet: wallet,
                            card: CardReference(id: Sensitive(card), last4: last4.flatMap(CardLast4.init), userID: userID.map(Sensitive.init)),
                            google: GoogleWalletHandshake(walletID: Sensitive(walletID), deviceID: Sensitive(deviceID),
                                                          googleOPCRequested: opc, serverSessionID: session.map(Sensitive.init)))
    }

    static func payment(reference: String = "order-1", token: String = #"{"version":"EC_v1","data":"ZGF0YQ=="}"#,
                        amount: Int64 = 250, autoSettle: Bool = false, agreement: CustomerAgreement? = nil) -> ProvisioningRequest {
        ProvisioningRequest(requestID: "req-pay-\(reference)", program: "p", kind: .payment, wallet: .applePay,
                            card: CardReference(id: Sensitive("backend-card-1")),
                            payment: PaymentInstruction(transactionReference: reference, amount: PaymentAmount(currency: "GBP", value: amount),
                                                        walletToken: Sensitive(token), narrative: "Mind Palace", autoSettle: autoSettle,
                                                        customerAgreement: agreement))
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    static func response(_ status: Int, _ body: String, headers: [HTTPHeader] = []) -> HTTPClientResponse {
        HTTPClientResponse(status: status, headers: headers, body: Array(body.utf8), elapsedMs: 1)
    }
}

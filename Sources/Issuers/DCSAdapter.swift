import Contract
import HTTP

/// DCS wallet binding: `POST /card/v1/apple-bind-wallet`, `/card/v2/google-bind-wallet` (`cardId`)
/// or `/card/v1/google-bind-wallet` (`cardMantissa`), HMAC-signed `X-DAPI-*` headers on every send,
/// answers in the `{code, message, messageDetail, data}` envelope. DCS has no state API.
public struct DCSAdapter: IssuerAdapter {
    /// The endpoint the adapter was made for.
    public let endpoint: IssuerEndpoint

    /// The one success code.
    public static let successCode = "SYS_SUCCESS"
    /// The network DCS cards run on: DCS issues Visa cards and calls Visa tokenization (guide), and
    /// its Google answer carries no network, which a Legacy Google Pay result requires.
    public static let cardNetwork = "VISA"

    /// Creates the adapter.
    public init(endpoint: IssuerEndpoint) {
        self.endpoint = endpoint
    }

    /// Apple: `{externalUserId, cardMantissa?, applePublicCertificates, appleNonce, appleNonceSignature}`;
    /// Google V2: `{externalUserId, cardId, clientCustomerId, deviceId}`; Google V1:
    /// `{externalUserId, cardMantissa?, clientCustomerId, deviceId}`. Signed per send, not here.
    public func makeRequest(for request: ProvisioningRequest) throws(IssuerRequestError) -> HTTPClientRequest {
        guard request.kind == .provision else {
            throw IssuerRequestError(code: .kindUnsupported, message: "DCS only provisions cards; send payments to a Worldpay program")
        }
        guard endpoint.credentials.apiSecret != nil else {
            throw IssuerRequestError(code: .unauthenticated,
                                     message: "the DCS program has no signing secret; an operator must set its api_secret_env")
        }
        guard let userID = request.card.userID else {
            throw IssuerRequestError(code: .invalidRequest, message: "card.user_id is required for DCS (externalUserId)")
        }
        var writer = JSONWriter(capacity: 4096)
        writer.beginObject()
        writer.key("externalUserId")
        writer.string(userID.revealed)
        let path: String
        switch request.wallet {
        case .applePay:
            guard let apple = request.apple else {
                throw IssuerRequestError(code: .invalidRequest, message: "apple is required for apple_pay")
            }
            path = "/card/v1/apple-bind-wallet"
            if let last4 = request.card.last4 {
                writer.key("cardMantissa")
                writer.string(last4.digits)
            }
            IssuerWire.writeApple(apple, to: &writer, names: ("applePublicCertificates", "appleNonce", "appleNonceSignature"))
        case .googleWallet, .googlePay:
            guard let google = request.google else {
                throw IssuerRequestError(code: .invalidRequest, message: "google is required for \(request.wallet.rawValue)")
            }
            switch endpoint.dcsGoogleAPI {
            case .v2:
                path = "/card/v2/google-bind-wallet"
                writer.key("cardId")
                writer.string(request.card.id.revealed)
            case .v1:
                path = "/card/v1/google-bind-wallet"
                if let last4 = request.card.last4 {
                    writer.key("cardMantissa")
                    writer.string(last4.digits)
                }
            }
            writer.key("clientCustomerId")
            writer.string(google.walletID.revealed)
            writer.key("deviceId")
            writer.string(google.deviceID.revealed)
        }
        writer.endObject()
        return HTTPClientRequest(method: "POST", url: endpoint.url(path), headers: IssuerWire.jsonHeaders,
                                 body: writer.bytes, timeoutMs: 0)
    }

    /// Adds `X-DAPI-*` headers with the send's timestamp and a fresh nonce.
    public func prepareForSending(_ request: HTTPClientRequest, nowMs: Int64) -> HTTPClientRequest {
        guard let secret = endpoint.credentials.apiSecret else { return request }
        return DCSSigner.sign(request, apiKey: endpoint.credentials.apiKey, secret: secret, timestampMs: nowMs)
    }

    /// HTTP 200 with `SYS_SUCCESS`: `data` read per wallet and checked (values at most 8192
    /// characters); any other envelope code, or a non-200 status, is an error carrying that code.
    public func answer(for response: HTTPClientResponse, to request: ProvisioningRequest) -> IssuerAnswer {
        let body = IssuerWire.json(response.body)
        let code = IssuerWire.string(body, "code")
        guard IssuerWire.isSuccess(response.status), code == Self.successCode else {
            if IssuerWire.isSuccess(response.status) && code == nil {
                return .invalidSuccessResponse(reason: "the DCS answer has no envelope code")
            }
            return IssuerWire.errorAnswer(status: response.status, code: code, message: IssuerWire.string(body, "message"))
        }
        guard let data = body?["data"], case .object = data else {
            return .invalidSuccessResponse(reason: "the DCS success lacks data")
        }
        func value(_ name: String) -> Result<Sensitive, PayloadProblem> {
            guard let text = data[name]?.stringValue else {
                return .failure(PayloadProblem(reason: "the DCS success lacks data.\(name) as a string"))
            }
            return .success(Sensitive(text))
        }
        let payload: ProvisioningPayload
        do throws(PayloadProblem) {
            switch request.wallet {
            case .applePay:
                payload = .apple(activationData: try value("activationData").get(),
                                 encryptedPassData: try value("encryptedPassData").get(),
                                 ephemeralPublicKey: try value("ephemeralPublicKey").get())
            case .googleWallet:
                payload = .googleWallet(opaquePaymentCard: try value("opaquePaymentCard").get(),
                                        googleProvisioningPayload: data["googleProvisioningPayload"]?.stringValue.map(Sensitive.init))
            case .googlePay:
                payload = .googlePay(opaquePaymentCard: try value("opaquePaymentCard").get(),
                                     network: data["network"]?.stringValue ?? Self.cardNetwork, walletType: nil,
                                     last4: data["last4"]?.stringValue)
            }
        } catch {
            return .invalidSuccessResponse(reason: error.reason)
        }
        return payload.answer(for: request, issuer: .dcs)
    }
}

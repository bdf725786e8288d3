import Contract
import HTTP

/// Gnosis Pay Apple Pay in-app provisioning: `POST {gnosisProvisionPath}` with
/// `{certificates, nonce, nonce_signature, device_type, app_version, product_type?}` →
/// `{activation_data, encrypted_pass_data, ephemeral_public_key}`; errors as `{"code","message"}`.
/// Apple Pay only; no state API.
public struct GnosisAdapter: IssuerAdapter {
    /// The endpoint the adapter was made for.
    public let endpoint: IssuerEndpoint

    /// Creates the adapter.
    public init(endpoint: IssuerEndpoint) {
        self.endpoint = endpoint
    }

    /// The Apple Pay provisioning call; other wallets are `wallet_unsupported`.
    public func makeRequest(for request: ProvisioningRequest) throws(IssuerRequestError) -> HTTPClientRequest {
        guard request.kind == .provision else {
            throw IssuerRequestError(code: .kindUnsupported, message: "Gnosis Pay only provisions cards; send payments to a Worldpay program")
        }
        guard request.wallet == .applePay else {
            throw IssuerRequestError(code: .walletUnsupported, message: "Gnosis Pay provisions Apple Pay only")
        }
        guard let apple = request.apple else {
            throw IssuerRequestError(code: .invalidRequest, message: "apple is required for apple_pay")
        }
        guard let deviceType = apple.deviceType, let appVersion = apple.appVersion else {
            throw IssuerRequestError(code: .invalidRequest, message: "apple.device_type and apple.app_version are required for Gnosis Pay")
        }
        guard endpoint.gnosisProvisionPath.hasPrefix("/"), endpoint.gnosisProvisionPath.contains("{id}") else {
            throw IssuerRequestError(code: .invalidRequest,
                                     message: "the program's gnosis_provision_path must start with / and contain {id}; an operator must fix it")
        }
        var writer = JSONWriter(capacity: 4096)
        writer.beginObject()
        IssuerWire.writeApple(apple, to: &writer)
        writer.key("device_type")
        writer.string(deviceType)
        writer.key("app_version")
        writer.string(appVersion)
        if let productType = apple.productType {
            writer.key("product_type")
            writer.string(productType)
        }
        writer.endObject()
        let path = endpoint.gnosisProvisionPath.replacing("{id}", with: IssuerWire.percentEncode(request.card.id.revealed))
        return IssuerWire.bearerPost(path, body: writer.bytes, to: endpoint)
    }

    /// 2xx: the three Apple values at the top level, checked; otherwise the error's `code`.
    public func answer(for response: HTTPClientResponse, to request: ProvisioningRequest) -> IssuerAnswer {
        let body = IssuerWire.json(response.body)
        guard IssuerWire.isSuccess(response.status) else {
            return IssuerWire.errorAnswer(status: response.status, code: IssuerWire.string(body, "code"),
                                          message: IssuerWire.string(body, "message"))
        }
        guard let body, case .object = body else {
            return .invalidSuccessResponse(reason: "the Gnosis Pay success body is not a JSON object")
        }
        switch PayloadReader.read(body, wallet: request.wallet) {
        case .success(let payload): return payload.answer(for: request, issuer: .gnosis)
        case .failure(let problem): return .invalidSuccessResponse(reason: problem.reason)
        }
    }
}

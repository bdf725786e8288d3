import Contract
import HTTP

/// Imprint "Add to Wallet": `POST /v2/payment_methods/{id}/provision/{wallet}` with the PassKit or
/// Google callback values; errors as `{"error":{"code","message"}}`; state query
/// `GET /v2/payment_methods/{id}/wallet_tokens` for reconciliation.
public struct ImprintAdapter: IssuerAdapter {
    /// The endpoint the adapter was made for.
    public let endpoint: IssuerEndpoint

    /// How far before the window start a token may be stamped and still count as ours (clock skew),
    /// where the state query names no handshake.
    public static let reconcileSkewMs: Int64 = 5_000

    /// Creates the adapter.
    public init(endpoint: IssuerEndpoint) {
        self.endpoint = endpoint
    }

    /// `POST {base}/v2/payment_methods/{card.id}/provision/{wallet}`: Apple
    /// `{certificates, nonce, nonce_signature}`, Google Wallet
    /// `{wallet_id, device_id, google_opc_requested, server_session_id?}`, Legacy `{wallet_id, device_id}`.
    public func makeRequest(for request: ProvisioningRequest) throws(IssuerRequestError) -> HTTPClientRequest {
        guard request.kind == .provision else {
            throw IssuerRequestError(code: .kindUnsupported, message: "Imprint only provisions cards; send payments to a Worldpay program")
        }
        var writer = JSONWriter(capacity: 4096)
        writer.beginObject()
        switch request.wallet {
        case .applePay:
            guard let apple = request.apple else {
                throw IssuerRequestError(code: .invalidRequest, message: "apple is required for apple_pay")
            }
            IssuerWire.writeApple(apple, to: &writer)
        case .googleWallet, .googlePay:
            guard let google = request.google else {
                throw IssuerRequestError(code: .invalidRequest, message: "google is required for \(request.wallet.rawValue)")
            }
            writer.key("wallet_id")
            writer.string(google.walletID.revealed)
            writer.key("device_id")
            writer.string(google.deviceID.revealed)
            if request.wallet == .googleWallet {
                writer.key("google_opc_requested")
                writer.bool(google.googleOPCRequested)
                if let session = google.serverSessionID {
                    writer.key("server_session_id")
                    writer.string(session.revealed)
                }
            }
        }
        writer.endObject()
        let path = "/v2/payment_methods/\(IssuerWire.percentEncode(request.card.id.revealed))/provision/\(request.wallet.rawValue)"
        return IssuerWire.bearerPost(path, body: writer.bytes, to: endpoint)
    }

    /// 2xx: `provisioning_payload` read per wallet and checked; otherwise the error envelope's code.
    public func answer(for response: HTTPClientResponse, to request: ProvisioningRequest) -> IssuerAnswer {
        let body = IssuerWire.json(response.body)
        guard IssuerWire.isSuccess(response.status) else {
            let error = body?["error"]
            return IssuerWire.errorAnswer(status: response.status, code: IssuerWire.string(error, "code"),
                                          message: IssuerWire.string(error, "message"))
        }
        guard let body, case .object = body else {
            return .invalidSuccessResponse(reason: "the Imprint success body is not a JSON object")
        }
        if let echoed = body["wallet"], echoed.stringValue != request.wallet.rawValue {
            return .invalidSuccessResponse(reason: "the Imprint success names another wallet than the request's")
        }
        guard let payload = body["provisioning_payload"], case .object = payload else {
            return .invalidSuccessResponse(reason: "the Imprint success lacks provisioning_payload")
        }
        switch PayloadReader.read(payload, wallet: request.wallet) {
        case .success(let value): return value.answer(for: request, issuer: .imprint)
        case .failure(let problem): return .invalidSuccessResponse(reason: problem.reason)
        }
    }

    /// `GET {base}/v2/payment_methods/{card id}/wallet_tokens`.
    public func makeStateQuery(for query: ReconcileQuery) -> HTTPClientRequest? {
        guard query.kind == .provision else { return nil }
        let path = "/v2/payment_methods/\(IssuerWire.percentEncode(query.cardID.revealed))/wallet_tokens"
        return HTTPClientRequest(method: "GET", url: endpoint.url(path),
                                 headers: [HTTPHeader(name: "Accept", value: "application/json"), endpoint.credentials.bearerHeader],
                                 timeoutMs: 0)
    }

    /// Applied iff a token for the query's wallet (and device, when known) made by this call's
    /// handshake (else created at or after `windowStart − 5 s`) exists; for Legacy Google Pay such a
    /// token is `notAttributable`; 404 `payment_method_not_found` means nothing was applied.
    public func reconcileAnswer(for response: HTTPClientResponse, to query: ReconcileQuery) -> ReconcileAnswer {
        let body = IssuerWire.json(response.body)
        guard IssuerWire.isSuccess(response.status) else {
            let code = IssuerWire.string(body?["error"], "code")
            if response.status == 404 && code == "payment_method_not_found" { return .notApplied }
            return .unknown(reason: "the Imprint wallet token query answered HTTP \(response.status)"
                + (code.map { " \($0)" } ?? ""))
        }
        guard let tokens = body?["data"]?.arrayValue else {
            return .unknown(reason: "the Imprint wallet token answer lacks the data array")
        }
        // Only this wallet on this device counts. A token whose `handshake_ref` is this call's was
        // made by it; any other token there means the card was already in that wallet, so the call
        // was, or would have been, answered `already_provisioned`. Legacy Google Pay's reference
        // recurs (the app's next attempt re-sends the same ids): a token with it made since the
        // window's start (less the skew allowance) may be this call's or a concurrent attempt's,
        // which no state tells apart. Without `handshake_ref`, the token's time alone tells: from
        // the window's start (less the skew allowance) on, ours.
        let earliest = query.windowStartMs - Self.reconcileSkewMs
        var earlier: String?
        for token in tokens {
            guard token["wallet"]?.stringValue == query.wallet.rawValue else { continue }
            if let deviceRef = query.deviceRef, token["device_ref"]?.stringValue?.lowercased() != deviceRef.lowercased() {
                continue
            }
            guard let created = token["created_at"]?.stringValue.flatMap(RFC3339.parse) else { continue }
            let status = token["status"]?.stringValue ?? "unknown"
            let detail = "a \(query.wallet.rawValue) wallet token (status \(status)) created at "
                + RFC3339.format(milliseconds: created) + (query.deviceRef == nil ? "" : " for this device")
            let made: Bool
            if let ours = query.handshakeRef, let theirs = token["handshake_ref"]?.stringValue {
                made = theirs.lowercased() == ours && created >= earliest
                if made && query.wallet == .googlePay { return .notAttributable(detail: detail + ", by this call or another attempt with the same ids") }
            } else {
                made = created >= earliest
            }
            if made { return .applied(detail: detail) }
            earlier = earlier ?? detail
        }
        return earlier.map { .alreadyPresent(detail: $0 + ", made by another call") } ?? .notApplied
    }
}

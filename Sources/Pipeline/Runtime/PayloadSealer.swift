import Contract

/// Turns an issuer's payload into the result's `payload`: a JWE (ECDH-ES, A256GCM) to the
/// request's `reply.jwk` (P-256 or X25519). Without a key (only allowed with `results.require_encryption: false`)
/// a provisioning payload is the normalized plaintext JSON, for trusted internal deployments;
/// payment action links are never sent in clear.
struct PayloadSealer: Sendable {
    let requireEncryption: Bool

    func seal(_ payload: ProvisioningPayload, for request: ProvisioningRequest) throws -> String {
        if let reply = request.reply {
            return try JWE.encrypt(payload.plaintextJSON(), to: reply.recipient())
        }
        guard !requireEncryption else { throw CryptoError(code: CryptoError.Code(rawValue: "missing_reply_key"), message: "no reply.jwk to encrypt the payload to") }
        return String(decoding: payload.plaintextJSON(), as: UTF8.self)
    }

    /// An authorized payment's action links sealed to the request's `reply.jwk`, or nil when the
    /// request has no key: links are capabilities and never travel in clear, whatever
    /// `require_encryption` says.
    func seal(_ links: PaymentLinks, for request: ProvisioningRequest) throws -> String? {
        guard let reply = request.reply, !links.isEmpty else { return nil }
        return try JWE.encrypt(links.plaintextJSON(), to: reply.recipient())
    }
}

import Contract

/// Turns an issuer's payload into the result's `payload`: a JWE (ECDH-ES, A256GCM) to the
/// request's `reply.jwk` (P-256 or X25519). Without a key (only allowed with `results.require_encryption: false`)
/// it is the normalized plaintext JSON, for trusted internal deployments.
struct PayloadSealer: Sendable {
    let requireEncryption: Bool

    func seal(_ payload: ProvisioningPayload, for request: ProvisioningRequest) throws -> String {
        if let reply = request.reply {
            return try JWE.encrypt(payload.plaintextJSON(), to: reply.recipient())
        }
        guard !requireEncryption else { throw CryptoError(code: CryptoError.Code(rawValue: "missing_reply_key"), message: "no reply.jwk to encrypt the payload to") }
        return String(decoding: payload.plaintextJSON(), as: UTF8.self)
    }
}

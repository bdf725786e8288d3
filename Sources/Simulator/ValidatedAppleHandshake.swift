/// A PassKit handshake that passed the simulator's checks.
struct ValidatedAppleHandshake: Sendable {
    /// The leaf certificate's details (device identity, key, common name).
    let leaf: LeafCertificateInfo
    /// The nonce as sent (base64).
    let nonce: String
    /// The decoded nonce.
    let nonceBytes: [UInt8]
    /// The nonce signature as sent (base64).
    let nonceSignature: String
    /// The decoded nonce signature.
    let nonceSignatureBytes: [UInt8]
    /// SHA-256 of the decoded nonce, for the single-use table.
    let nonceDigest: DigestKey
}

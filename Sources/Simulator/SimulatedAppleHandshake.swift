import Contract

/// The values PassKit would hand an app for one Apple Pay provisioning attempt, plus the leaf's
/// private key so tests can decrypt what the issuer returned.
public struct SimulatedAppleHandshake: Sendable {
    /// Base64 DER certificates: leaf first, then the intermediate (no root).
    public var certificates: [String]
    /// Base64 nonce (16 random bytes; single-use at the simulator).
    public var nonce: String
    /// Base64 ECDSA-SHA256 signature over the nonce bytes by the leaf key (DER).
    public var nonceSignature: String
    /// The leaf certificate, DER.
    public var leafCertificateDER: [UInt8]
    /// The leaf's private key: decrypts `encrypted_pass_data` with `ApplePassDecryptor`.
    public var leafPrivateKey: ECPrivateKey
    /// SHA-256 hex of the leaf DER: Imprint's `device_ref` for this device.
    public var deviceRef: String
    /// The `/_sim/calls` handshake key: SHA-256 hex of the decoded nonce.
    public var callHandshake: String

    /// Creates a handshake from its parts.
    public init(certificates: [String], nonce: String, nonceSignature: String, leafCertificateDER: [UInt8],
                leafPrivateKey: ECPrivateKey) {
        self.certificates = certificates
        self.nonce = nonce
        self.nonceSignature = nonceSignature
        self.leafCertificateDER = leafCertificateDER
        self.leafPrivateKey = leafPrivateKey
        deviceRef = Crypto.hex(Crypto.sha256(leafCertificateDER))
        callHandshake = SimulatorCall.appleHandshake(nonce: nonce)
    }

    /// The handshake as the request's `apple` object.
    public func passKitHandshake(deviceType: String? = "iphone", appVersion: String? = "5.2.0",
                                 productType: String? = nil) -> ApplePassKitHandshake {
        ApplePassKitHandshake(certificates: certificates.map(Sensitive.init), nonce: Sensitive(nonce),
                              nonceSignature: Sensitive(nonceSignature), deviceType: deviceType, appVersion: appVersion,
                              productType: productType)
    }

    /// The Imprint / Gnosis Pay request fields: `certificates`, `nonce`, `nonce_signature`.
    public var requestFields: [String: JSONValue] {
        ["certificates": .array(certificates.map(JSONValue.string)), "nonce": .string(nonce),
         "nonce_signature": .string(nonceSignature)]
    }
}

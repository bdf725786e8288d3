/// The values PassKit hands the app for Apple Pay in-app provisioning (`apple` in the request).
public struct ApplePassKitHandshake: Sendable, Hashable {
    /// Base64 DER certificates as PassKit supplied them: leaf first, then the intermediate.
    public var certificates: [Sensitive]
    /// Base64 single-use nonce.
    public var nonce: Sensitive
    /// Base64 signature over the nonce.
    public var nonceSignature: Sensitive
    /// `iphone` or `apple_watch` (required by Gnosis Pay).
    public var deviceType: String?
    /// The app version, e.g. `5.2.0` (required by Gnosis Pay).
    public var appVersion: String?
    /// Gnosis Pay product type, only when Gnosis Pay assigned one to the program.
    public var productType: String?

    /// Creates a handshake.
    public init(certificates: [Sensitive], nonce: Sensitive, nonceSignature: Sensitive,
                deviceType: String? = nil, appVersion: String? = nil, productType: String? = nil) {
        self.certificates = certificates
        self.nonce = nonce
        self.nonceSignature = nonceSignature
        self.deviceType = deviceType
        self.appVersion = appVersion
        self.productType = productType
    }
}

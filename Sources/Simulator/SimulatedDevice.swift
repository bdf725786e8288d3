import Contract
import Synchronization

/// A phone or watch for tests, the demo and benchmarks: mints Apple PassKit handshakes (a real
/// root → intermediate → leaf P-256 chain made with OpenSSL) and Google callback values.
///
/// The device's name is its Google `device_id` and its leaf certificate's common name, so a name
/// ending in `-ineligible` makes every issuer answer `device_ineligible`. The device keeps one leaf
/// (its identity: the same `device_ref` every time) unless asked for a fresh one; the simulated
/// root and intermediate are made once per process. Minting a handshake with the device's leaf costs
/// one ECDSA signature; a fresh leaf adds a key generation and a certificate signature.
public final class SimulatedDevice: Sendable {
    /// The device name: Google `device_id`, Apple leaf common name.
    public let name: String
    /// The Google wallet id (stable per device).
    public let walletID: String
    private let leaf: Mutex<(der: [UInt8], key: OpenSSLKeyPair)>

    /// Creates a device; `name` defaults to 12 random hex digits (like a stable hardware id).
    public init(name: String? = nil) throws(SimulatorError) {
        let authority = try PassKitCertificateAuthority.shared.get()
        let deviceName = name ?? Crypto.hex(Crypto.randomBytes(6))
        self.name = deviceName
        walletID = Crypto.hex(Crypto.randomBytes(8))
        leaf = Mutex(try authority.issueLeaf(commonName: deviceName))
    }

    /// The current leaf certificate, DER.
    public var leafCertificateDER: [UInt8] { leaf.withLock { $0.der } }

    /// SHA-256 hex of the current leaf DER (Imprint's Apple `device_ref`).
    public var appleDeviceRef: String { Crypto.hex(Crypto.sha256(leafCertificateDER)) }

    /// Replaces the device's leaf with a fresh one (a new Apple device identity).
    public func rotateLeaf() throws(SimulatorError) {
        let fresh = try PassKitCertificateAuthority.shared.get().issueLeaf(commonName: name)
        leaf.withLock { $0 = fresh }
    }

    /// A fresh PassKit handshake: certificates (leaf, intermediate), a random 16-byte nonce and the
    /// leaf's ECDSA signature over it. `freshLeaf` uses a one-off leaf instead of the device's own.
    public func appleHandshake(freshLeaf: Bool = false) throws(SimulatorError) -> SimulatedAppleHandshake {
        let authority = try PassKitCertificateAuthority.shared.get()
        let (der, key) = freshLeaf ? try authority.issueLeaf(commonName: name) : leaf.withLock { $0 }
        let nonce = Crypto.randomBytes(16)
        let signature = try key.sign(nonce)
        return SimulatedAppleHandshake(certificates: [Crypto.base64Encode(der), Crypto.base64Encode(authority.intermediateDER)],
                                       nonce: Crypto.base64Encode(nonce), nonceSignature: Crypto.base64Encode(signature),
                                       leafCertificateDER: der, leafPrivateKey: try key.contractKey())
    }

    /// Google callback values for a new attempt: this device's wallet and device ids, and a fresh
    /// server session id when `opcRequested`.
    public func googleHandshake(opcRequested: Bool = true) -> SimulatedGoogleHandshake {
        SimulatedGoogleHandshake(walletID: walletID, deviceID: name, googleOPCRequested: opcRequested,
                                 serverSessionID: opcRequested ? Crypto.base64URLEncode(Crypto.randomBytes(24)) : nil)
    }

    /// An Apple Pay `paymentData` JSON string Worldpay accepts: `version` EC_v1, base64 `data` and
    /// `signature`, and a `header` with `ephemeralPublicKey` (DER SubjectPublicKeyInfo),
    /// `publicKeyHash` and `transactionId`. Random content of realistic sizes (not decryptable).
    public static func applePayToken(transactionID: String? = nil) -> String {
        let random = Crypto.randomBytes(320 + 1200 + 64 + 32)
        let spkiPrefix: [UInt8] = [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08,
                                   0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04]
        var writer = JSONWriter(capacity: 2600)
        writer.beginObject()
        writer.key("version"); writer.string("EC_v1")
        writer.key("data"); writer.string(Crypto.base64Encode(Array(random[0..<320])))
        writer.key("signature"); writer.string(Crypto.base64Encode(Array(random[320..<1520])))
        writer.key("header")
        writer.beginObject()
        writer.key("ephemeralPublicKey"); writer.string(Crypto.base64Encode(spkiPrefix + Array(random[1520..<1584])))
        writer.key("publicKeyHash"); writer.string(Crypto.base64Encode(Array(random[1584...])))
        writer.key("transactionId"); writer.string(transactionID ?? Crypto.hex(Crypto.randomBytes(32)))
        writer.endObject()
        writer.endObject()
        return writer.text
    }
}

import COpenSSL
import Contract

/// A stand-in for Apple's certificate hierarchy: a self-signed root, an intermediate signed by the
/// root, and P-256 leaf certificates signed by the intermediate, made with OpenSSL at run time.
///
/// The chain passes `CertificateChainVerifier` (two DER certificates, the leaf issued and signed by
/// the intermediate, the intermediate not self-signed). Creating the root and the intermediate costs
/// two key generations and two signatures, so one authority is made per process and shared.
final class PassKitCertificateAuthority: Sendable {
    /// The authority every `SimulatedDevice` uses, created on first use.
    static let shared: Result<PassKitCertificateAuthority, SimulatorError> = Result { () throws(SimulatorError) in
        try PassKitCertificateAuthority()
    }

    private static let rootName = "Simulated Apple Root CA - G3"
    private static let intermediateName = "Simulated Apple Worldwide Developer Relations CA - G2"

    /// The intermediate certificate, DER.
    let intermediateDER: [UInt8]
    private let intermediateKey: OpenSSLKeyPair

    private init() throws(SimulatorError) {
        let rootKey = try OpenSSLKeyPair.generate()
        _ = try Self.makeCertificate(subjectName: Self.rootName, subjectKey: rootKey, issuerName: Self.rootName,
                                     issuerKey: rootKey, role: .root)
        let intermediateKey = try OpenSSLKeyPair.generate()
        intermediateDER = try Self.makeCertificate(subjectName: Self.intermediateName, subjectKey: intermediateKey,
                                                   issuerName: Self.rootName, issuerKey: rootKey, role: .intermediate)
        self.intermediateKey = intermediateKey
    }

    /// Issues a leaf certificate for `commonName` over a fresh P-256 key.
    func issueLeaf(commonName: String) throws(SimulatorError) -> (der: [UInt8], key: OpenSSLKeyPair) {
        let key = try OpenSSLKeyPair.generate()
        let der = try Self.makeCertificate(subjectName: commonName, subjectKey: key, issuerName: Self.intermediateName,
                                           issuerKey: intermediateKey, role: .leaf)
        return (der, key)
    }

    private enum Role {
        case root, intermediate, leaf
    }

    private static func makeCertificate(subjectName: String, subjectKey: OpenSSLKeyPair, issuerName: String,
                                        issuerKey: OpenSSLKeyPair, role: Role) throws(SimulatorError) -> [UInt8] {
        guard let certificate = X509_new() else {
            throw SimulatorError(code: .crypto, message: "X509_new failed: \(drainOpenSSLErrors())")
        }
        defer { X509_free(certificate) }
        let serial = Int(Crypto.randomBytes(7).reduce(0) { $0 << 8 | Int($1) }) | 1
        let validDays: Int = role == .leaf ? 365 : 3650
        guard X509_set_version(certificate, 2) == 1,
              ASN1_INTEGER_set(X509_get_serialNumber(certificate), serial) == 1,
              X509_gmtime_adj(X509_getm_notBefore(certificate), -3600) != nil,
              X509_gmtime_adj(X509_getm_notAfter(certificate), validDays * 86_400) != nil,
              X509_set_pubkey(certificate, subjectKey.pointer) == 1
        else {
            throw SimulatorError(code: .crypto, message: "filling the certificate failed: \(drainOpenSSLErrors())")
        }
        try setName(subjectName, on: certificate, subject: true)
        try setName(issuerName, on: certificate, subject: false)
        switch role {
        case .root:
            try addExtension(NID_basic_constraints, "critical,CA:TRUE", to: certificate)
            try addExtension(NID_key_usage, "critical,keyCertSign,cRLSign", to: certificate)
        case .intermediate:
            try addExtension(NID_basic_constraints, "critical,CA:TRUE,pathlen:0", to: certificate)
            try addExtension(NID_key_usage, "critical,keyCertSign,cRLSign", to: certificate)
        case .leaf:
            try addExtension(NID_basic_constraints, "critical,CA:FALSE", to: certificate)
            try addExtension(NID_key_usage, "critical,digitalSignature,keyAgreement", to: certificate)
        }
        guard X509_sign(certificate, issuerKey.pointer, EVP_sha256()) > 0 else {
            throw SimulatorError(code: .crypto, message: "X509_sign failed: \(drainOpenSSLErrors())")
        }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(certificate, &output)
        guard length > 0, let output else {
            throw SimulatorError(code: .crypto, message: "i2d_X509 failed: \(drainOpenSSLErrors())")
        }
        defer { shim_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    private static func setName(_ commonName: String, on certificate: OpaquePointer, subject: Bool) throws(SimulatorError) {
        guard let name = X509_NAME_new() else {
            throw SimulatorError(code: .crypto, message: "X509_NAME_new failed: \(drainOpenSSLErrors())")
        }
        defer { X509_NAME_free(name) }
        let organization = Array("Provisioner Simulator".utf8)
        let common = Array(commonName.utf8)
        guard X509_NAME_add_entry_by_NID(name, NID_organizationName, V_ASN1_UTF8STRING, organization,
                                         Int32(organization.count), -1, 0) == 1,
              X509_NAME_add_entry_by_NID(name, NID_commonName, V_ASN1_UTF8STRING, common, Int32(common.count), -1, 0) == 1
        else {
            throw SimulatorError(code: .crypto, message: "building the certificate name failed: \(drainOpenSSLErrors())")
        }
        let status = subject ? X509_set_subject_name(certificate, name) : X509_set_issuer_name(certificate, name)
        guard status == 1 else {
            throw SimulatorError(code: .crypto, message: "setting the certificate name failed: \(drainOpenSSLErrors())")
        }
    }

    private static func addExtension(_ nid: Int32, _ value: String, to certificate: OpaquePointer) throws(SimulatorError) {
        guard let created = X509V3_EXT_conf_nid(nil, nil, nid, value) else {
            throw SimulatorError(code: .crypto, message: "X509V3_EXT_conf_nid failed: \(drainOpenSSLErrors())")
        }
        defer { X509_EXTENSION_free(created) }
        guard X509_add_ext(certificate, created, -1) == 1 else {
            throw SimulatorError(code: .crypto, message: "X509_add_ext failed: \(drainOpenSSLErrors())")
        }
    }
}

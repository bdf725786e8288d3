import COpenSSL
import Contract

/// A P-256 key pair held as an OpenSSL `EVP_PKEY`, for signing certificates and nonces.
///
/// `@unchecked Sendable` is safe: the key is never modified after creation, OpenSSL allows an
/// unmodified `EVP_PKEY` to be used from several threads at once (every operation makes its own
/// context), and the key is freed in `deinit`, when no holder is left.
final class OpenSSLKeyPair: @unchecked Sendable {
    let pointer: OpaquePointer

    private init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// Generates a fresh P-256 key pair.
    static func generate() throws(SimulatorError) -> OpenSSLKeyPair {
        guard let key = shim_EVP_EC_gen("P-256") else {
            throw SimulatorError(code: .crypto, message: "P-256 key generation failed: \(drainOpenSSLErrors())")
        }
        return OpenSSLKeyPair(taking: key)
    }

    /// The same key as a Contract `ECPrivateKey` (through PKCS#8 PEM).
    func contractKey() throws(SimulatorError) -> ECPrivateKey {
        guard let bio = BIO_new(BIO_s_mem()) else {
            throw SimulatorError(code: .crypto, message: "BIO_new failed: \(drainOpenSSLErrors())")
        }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil) == 1 else {
            throw SimulatorError(code: .crypto, message: "PEM encoding failed: \(drainOpenSSLErrors())")
        }
        var data: UnsafeMutablePointer<CChar>?
        let length = shim_BIO_get_mem_data(bio, &data)
        guard length > 0, let data else {
            throw SimulatorError(code: .crypto, message: "PEM encoding produced no output")
        }
        let pem = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
        do {
            return try ECPrivateKey(pem: pem)
        } catch {
            throw SimulatorError(code: .crypto, message: "the generated key could not be read back: \(error)")
        }
    }

    /// An ECDSA-SHA256 signature (DER) over `message`.
    func sign(_ message: [UInt8]) throws(SimulatorError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else {
            throw SimulatorError(code: .crypto, message: "EVP_MD_CTX_new failed: \(drainOpenSSLErrors())")
        }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pointer) == 1 else {
            throw SimulatorError(code: .crypto, message: "EVP_DigestSignInit failed: \(drainOpenSSLErrors())")
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else {
            throw SimulatorError(code: .crypto, message: "EVP_DigestSign failed: \(drainOpenSSLErrors())")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
            throw SimulatorError(code: .crypto, message: "EVP_DigestSign failed: \(drainOpenSSLErrors())")
        }
        signature.removeSubrange(length...)
        return signature
    }
}

/// Empties OpenSSL's thread-local error queue and returns its entries as one line.
func drainOpenSSLErrors() -> String { OpenSSLErrorQueue.drain(ifEmpty: "no OpenSSL error recorded") }

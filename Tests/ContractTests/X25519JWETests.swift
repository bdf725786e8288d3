@testable import Contract
import Foundation
import Testing

/// X25519 reply keys (RFC 8037 `OKP`): keys, ECDH-ES + A256GCM both ways, small-order keys
/// refused, and jwcrypto as the independent peer for the RFC 7638 thumbprints (the JWE interop
/// with jwcrypto is `JWETests`, for both curves).
@Suite("JWE to X25519 reply keys", .timeLimit(.minutes(5)))
struct X25519JWETests {
    /// RFC 7748 section 6.1: Alice's key pair, Bob's public key and their shared secret.
    @Test func rfc7748DiffieHellmanVector() throws {
        let hex = { (text: String) throws -> [UInt8] in try #require(Crypto.bytes(fromHex: text)) }
        let alice = try X25519PrivateKey(jwk: .object([
            "kty": .string("OKP"), "crv": .string("X25519"),
            "x": .string(Crypto.base64URLEncode(try hex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"))),
            "d": .string(Crypto.base64URLEncode(try hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))),
        ]))
        let bob = try X25519PublicJWK(x: Crypto.base64URLEncode(try hex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")))
        // RFC 8037 appendix A.6 writes Bob's key as this JWK.
        #expect(bob.x == "3p7bfXt9wbTTW2HC7OQ1Nz-DQ8hbeGdNrfx-FG-IK08")
        let secret = try alice.key.sharedSecret(with: bob.key)
        #expect(Crypto.hex(secret) == "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
        // A private JWK whose x is not the public half of d is refused.
        var mismatched = try #require(JSONParser().parse(Array(try alice.jwkRepresentation().revealed.utf8)).objectValue)
        mismatched["x"] = .string(bob.x)
        #expect(throws: CryptoError.self) { try X25519PrivateKey(jwk: .object(mismatched)) }
    }

    @Test func encryptsAndDecryptsWithAnOKPEphemeralKey() throws {
        let key = try X25519PrivateKey.generate()
        let plaintext = Array(#"{"activation_data":"YWN0aXZhdGlvbg=="}"#.utf8)
        let compact = try JWE.encrypt(plaintext, to: .x25519(try key.publicKey))
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 5 && parts[1].isEmpty)
        let header = try JSONParser().parse(try #require(Crypto.base64URLDecode(String(parts[0]))))
        #expect(header["alg"]?.stringValue == "ECDH-ES" && header["enc"]?.stringValue == "A256GCM")
        #expect(header["epk"]?["kty"]?.stringValue == "OKP" && header["epk"]?["crv"]?.stringValue == "X25519")
        #expect(header["epk"]?["y"] == nil)
        // The header bytes are the sorted-key JSONWriter form.
        let headerBytes = try #require(Crypto.base64URLDecode(String(parts[0])))
        #expect(JSONWriter.encode(header) == headerBytes)
        #expect(try JWE.decrypt(compact, with: .x25519(key)) == plaintext)
        #expect(try JWE.encrypt(plaintext, to: .x25519(try key.publicKey)) != compact)
        // Another X25519 key, or a P-256 key, cannot open it.
        #expect(throws: CryptoError.self) { try JWE.decrypt(compact, with: .x25519(try X25519PrivateKey.generate())) }
        #expect(throws: CryptoError.self) { try JWE.decrypt(compact, with: try ECPrivateKey.generate()) }
        // Nor can an X25519 key open a P-256 JWE.
        let p256 = try JWE.encrypt(plaintext, to: try ECPrivateKey.generate().publicKey)
        #expect(throws: CryptoError.self) { try JWE.decrypt(p256, with: .x25519(key)) }
    }

    @Test func smallOrderKeysAreRefused() throws {
        // u = 0, u = 1 and an order-8 point (RFC 7748 / libsodium's blocklist): each makes every shared secret zero.
        let smallOrder = ["0000000000000000000000000000000000000000000000000000000000000000",
                          "0100000000000000000000000000000000000000000000000000000000000000",
                          "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"]
        for hex in smallOrder {
            let x = Crypto.base64URLEncode(try #require(Crypto.bytes(fromHex: hex)))
            #expect(throws: CryptoError.self) { try X25519PublicJWK(x: x) }
            #expect(throws: CryptoError.self) { try ReplyKey(keyType: "OKP", curve: "X25519", x: x, y: nil).recipient() }
        }
        // A JWE whose epk is of small order does not decrypt either (the derivation refuses the zero secret).
        let key = try X25519PrivateKey.generate()
        let compact = try JWE.encrypt([1, 2, 3], to: .x25519(try key.publicKey))
        var parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let headerBytes = try #require(Crypto.base64URLDecode(parts[0]))
        var header = try #require(try JSONParser().parse(headerBytes).objectValue)
        header["epk"] = .object(["kty": .string("OKP"), "crv": .string("X25519"), "x": .string(Crypto.base64URLEncode([UInt8](repeating: 0, count: 32)))])
        parts[0] = Crypto.base64URLEncode(JSONWriter.encode(.object(header)))
        #expect(throws: CryptoError.self) { try JWE.decrypt(parts.joined(separator: "."), with: .x25519(key)) }
        #expect(throws: CryptoError.self) { try X25519PublicJWK(x: "AAAA") }
        #expect(throws: CryptoError.self) { try X25519PublicJWK(jwk: .object(["kty": .string("EC"), "crv": .string("X25519"), "x": .string("AAAA")])) }
    }

    @Test func replyPrivateKeysRoundTripThroughPEMAndPrintRedacted() throws {
        for curve in JWKCurve.allCases {
            let key = try ReplyPrivateKey.generate(curve)
            let pem = try key.pemRepresentation()
            #expect(pem.revealed.hasPrefix("-----BEGIN PRIVATE KEY-----"))
            let read = try ReplyPrivateKey(pem: pem.revealed)
            #expect(read.curve == curve)
            #expect(try read.recipient == (try key.recipient))
            #expect("\(key)" == "<redacted>" && "\(read)" == "<redacted>")
            let recipient = try key.recipient
            #expect(try ReplyKey(recipient).recipient() == recipient)
        }
        let x25519PEM = try X25519PrivateKey.generate().pemRepresentation().revealed
        #expect(throws: CryptoError.self) { try ECPrivateKey(pem: x25519PEM) }
        #expect(throws: CryptoError.self) { try X25519PrivateKey(pem: try ECPrivateKey.generate().pemRepresentation().revealed) }
    }

    /// RFC 7638 thumbprints of both key kinds, as jwcrypto computes them.
    @Test func thumbprintsMatchJwcrypto() throws {
        let keys: [JWERecipient] = [.p256(try ECPrivateKey.generate().publicKey), .x25519(try X25519PrivateKey.generate().publicKey)]
        let script = """
        import sys, json
        from jwcrypto import jwk
        for line in sys.stdin.read().splitlines():
            print(jwk.JWK(**json.loads(line)).thumbprint())
        """
        let input = keys.map { String(decoding: JSONWriter.encode($0.jsonValue), as: UTF8.self) }.joined(separator: "\n")
        let output = try PythonPeer.run(script, input: input).split(separator: "\n").map(String.init)
        #expect(output == keys.map(\.thumbprint))
    }
}

import Contract
import Foundation
import Testing

@Suite("JWE ECDH-ES + A256GCM", .timeLimit(.minutes(5)))
struct JWETests {
    @Test func encryptsAndDecrypts() throws {
        let key = try ECPrivateKey.generate()
        let plaintext = Array(#"{"activation_data":"YWN0aXZhdGlvbg=="}"#.utf8)
        let compact = try JWE.encrypt(plaintext, to: try key.publicKey)
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 5)
        #expect(parts[1].isEmpty)
        #expect(try JWE.decrypt(compact, with: key) == plaintext)
        #expect(try JWE.encrypt(plaintext, to: try key.publicKey) != compact)  // fresh ephemeral key and IV
    }

    @Test func protectedHeaderCarriesAlgEncAndEpk() throws {
        let key = try ECPrivateKey.generate()
        let compact = try JWE.encrypt([1, 2, 3], to: try key.publicKey)
        let headerPart = String(compact.split(separator: ".")[0])
        let header = try JSONParser().parse(try #require(Crypto.base64URLDecode(headerPart)))
        #expect(header["alg"]?.stringValue == "ECDH-ES")
        #expect(header["enc"]?.stringValue == "A256GCM")
        #expect(header["epk"]?["kty"]?.stringValue == "EC")
        #expect(header["epk"]?["crv"]?.stringValue == "P-256")
        #expect(throws: Never.self) { try ECPublicJWK(jwk: try #require(header["epk"])) }
    }

    @Test func everyMessageHasItsOwnEphemeralKeyFromReusedGenerationContexts() async throws {
        let key = try ECPrivateKey.generate()
        let recipient = try key.publicKey
        // Several threads at once, so pooled generation contexts are taken, reused and returned concurrently.
        let headers = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try (0..<25).map { _ in
                        let compact = try JWE.encrypt([7, 7, 7], to: recipient)
                        #expect(try JWE.decrypt(compact, with: key) == [7, 7, 7])
                        return String(compact.split(separator: ".")[0])
                    }
                }
            }
            var all: [String] = []
            for try await part in group { all += part }
            return all
        }
        let epks = try headers.map { part in
            let header = try JSONParser().parse(try #require(Crypto.base64URLDecode(part)))
            return (header["epk"]?["x"]?.stringValue ?? "") + (header["epk"]?["y"]?.stringValue ?? "")
        }
        #expect(Set(epks).count == 100)
        // The header bytes are the sorted-key JSONWriter form of the JSONValue header.
        let first = try #require(Crypto.base64URLDecode(headers[0]))
        #expect(JSONWriter.encode(try JSONParser().parse(first)) == first)
    }

    @Test func rejectsTamperingWrongKeysAndOtherAlgorithms() throws {
        let key = try ECPrivateKey.generate(), other = try ECPrivateKey.generate()
        let compact = try JWE.encrypt(Array("secret".utf8), to: try key.publicKey)
        #expect(throws: CryptoError.self) { try JWE.decrypt(compact, with: other) }
        var parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var ciphertext = try #require(Crypto.base64URLDecode(parts[3]))
        ciphertext[0] ^= 0x01
        parts[3] = Crypto.base64URLEncode(ciphertext)
        do {
            _ = try JWE.decrypt(parts.joined(separator: "."), with: key)
            Issue.record("a tampered ciphertext decrypted")
        } catch {
            #expect(error.code == .authenticationFailed)
        }
        let rsaHeader = Crypto.base64URLEncode(Array(#"{"alg":"RSA-OAEP","enc":"A256GCM"}"#.utf8))
        #expect(throws: CryptoError.self) { try JWE.decrypt(rsaHeader + "..AAAAAAAAAAAAAAAA.AA.AAAAAAAAAAAAAAAAAAAAAA", with: key) }
        #expect(throws: CryptoError.self) { try JWE.decrypt("a.b.c", with: key) }
        let withKey = compact.split(separator: ".", omittingEmptySubsequences: false)
        let nonEmptyKey = [String(withKey[0]), "AAAA", String(withKey[2]), String(withKey[3]), String(withKey[4])].joined(separator: ".")
        #expect(throws: CryptoError.self) { try JWE.decrypt(nonEmptyKey, with: key) }
    }

    @Test func privateKeyRoundTripsThroughPEMAndJWK() throws {
        let key = try ECPrivateKey.generate()
        let pem = try key.pemRepresentation()
        #expect(pem.revealed.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let fromPEM = try ECPrivateKey(pem: pem.revealed)
        #expect(try fromPEM.publicKey == (try key.publicKey))
        let jwk = try JSONParser().parse(try key.jwkRepresentation().revealed)
        let fromJWK = try ECPrivateKey(jwk: jwk)
        #expect(try fromJWK.publicKey == (try key.publicKey))
        #expect("\(key)" == "<redacted>")
        #expect(throws: CryptoError.self) { try ECPrivateKey(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n") }
        var mismatched = try #require(jwk.objectValue)
        mismatched["d"] = .string(Crypto.base64URLEncode(Crypto.randomBytes(32)))
        #expect(throws: CryptoError.self) { try ECPrivateKey(jwk: .object(mismatched)) }
    }

    @Test func publicJWKRejectsPointsOffTheCurveAndBadEncodings() throws {
        let good = try ECPrivateKey.generate().publicKey
        #expect(throws: Never.self) { try ECPublicJWK(x: good.x, y: good.y) }
        var y = try #require(Crypto.base64URLDecode(good.y))
        y[31] ^= 0x01
        #expect(throws: CryptoError.self) { try ECPublicJWK(x: good.x, y: Crypto.base64URLEncode(y)) }
        #expect(throws: CryptoError.self) { try ECPublicJWK(x: good.x + "=", y: good.y) }
        #expect(throws: CryptoError.self) { try ECPublicJWK(x: String(good.x.dropLast(2)), y: good.y) }
        #expect(throws: CryptoError.self) { try ECPublicJWK(jwk: .object(["kty": .string("EC"), "crv": .string("P-384"),
                                                                          "x": .string(good.x), "y": .string(good.y)])) }
    }

    /// Our JWE, decrypted by jwcrypto (P-256 and X25519 reply keys).
    @Test(arguments: JWKCurve.allCases)
    func jwcryptoDecryptsOurJWE(curve: JWKCurve) throws {
        let key = try ReplyPrivateKey.generate(curve)
        let plaintext = #"{"opaque_payment_card":"eyJraWQiOi…","network":"VISA"}"#
        let compact = try JWE.encrypt(Array(plaintext.utf8), to: try key.recipient)
        let script = """
        import sys
        from jwcrypto import jwk, jwe
        pem = sys.stdin.read().encode()
        key = jwk.JWK.from_pem(pem)
        assert key["kty"] == sys.argv[2] and key["crv"] == sys.argv[3]
        token = jwe.JWE()
        token.deserialize(sys.argv[1], key=key)
        assert token.jose_header["alg"] == "ECDH-ES" and token.jose_header["enc"] == "A256GCM"
        assert token.jose_header["epk"]["kty"] == sys.argv[2] and token.jose_header["epk"]["crv"] == sys.argv[3]
        sys.stdout.write(token.payload.decode("utf-8"))
        """
        let output = try PythonPeer.run(script, arguments: [compact, curve.keyType, curve.rawValue], input: try key.pemRepresentation().revealed)
        #expect(output == plaintext)
    }

    /// jwcrypto's JWE, decrypted by us (P-256 and X25519 reply keys).
    @Test(arguments: JWKCurve.allCases)
    func weDecryptJwcryptoJWE(curve: JWKCurve) throws {
        let key = try ReplyPrivateKey.generate(curve)
        let publicJWK = String(decoding: JSONWriter.encode(try key.recipient.jsonValue), as: UTF8.self)
        let script = """
        import sys, json
        from jwcrypto import jwk, jwe
        key = jwk.JWK(**json.loads(sys.argv[1]))
        token = jwe.JWE(sys.stdin.read().encode("utf-8"), protected=json.dumps({"alg": "ECDH-ES", "enc": "A256GCM"}))
        token.add_recipient(key)
        sys.stdout.write(token.serialize(compact=True))
        """
        let plaintext = "payload from jwcrypto: é 😀"
        let compact = try PythonPeer.run(script, arguments: [publicJWK], input: plaintext)
        #expect(String(decoding: try JWE.decrypt(compact, with: key), as: UTF8.self) == plaintext)
    }
}

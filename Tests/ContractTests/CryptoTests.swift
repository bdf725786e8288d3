import Contract
import Testing

@Suite("Crypto helpers", .timeLimit(.minutes(5)))
struct CryptoTests {
    private func hex(_ text: String) -> [UInt8] { Crypto.bytes(fromHex: text) ?? [] }

    @Test func sha256KnownAnswers() {
        #expect(Crypto.hex(Crypto.sha256(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Crypto.hex(Crypto.sha256([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Crypto.sha256(utf8: "abc") == Crypto.sha256(Array("abc".utf8)))
    }

    /// RFC 4231 section 4 test cases (HMAC-SHA256 column).
    @Test(arguments: [
        ("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        ("4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", String(repeating: "dd", count: 50),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        ("0102030405060708090a0b0c0d0e0f10111213141516171819", String(repeating: "cd", count: 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        ("0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c", "546573742057697468205472756e636174696f6e",
         "a3b6167473100ee06e0c796c2955552b"),
        (String(repeating: "aa", count: 131),
         "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        (String(repeating: "aa", count: 131),
         "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d73697a65206b657920616e642061206c6172676572207468616e20626c6f636b2d73697a6520646174612e20546865206b6579206e6565647320746f20626520686173686564206265666f7265206265696e6720757365642062792074686520484d414320616c676f726974686d2e",
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ])
    func hmacSHA256RFC4231(key: String, data: String, expected: String) {
        let mac = Crypto.hex(Crypto.hmacSHA256(key: hex(key), data: hex(data)))
        #expect(mac.hasPrefix(expected))  // test case 5 publishes a 128-bit truncation
    }

    @Test func strictBase64AcceptsCanonicalText() {
        #expect(Crypto.base64Decode("") == [])
        #expect(Crypto.base64Decode("Zg==") == Array("f".utf8))
        #expect(Crypto.base64Decode("Zm8=") == Array("fo".utf8))
        #expect(Crypto.base64Decode("Zm9v") == Array("foo".utf8))
        #expect(Crypto.base64Decode("+/+/") == [0xFB, 0xFF, 0xBF])
        for length in 0..<20 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 5) }
            #expect(Crypto.base64Decode(Crypto.base64Encode(bytes)) == bytes)
            #expect(Crypto.base64URLDecode(Crypto.base64URLEncode(bytes)) == bytes)
        }
    }

    @Test(arguments: ["Zg", "Zg=", "Zm9v\n", " Zm9v", "Zm 9v", "Zm9v\r\nZm9v", "-_-_", "Zh==", "Zm9=", "Zg==Zg==", "====",
                      "Zm9v=", "Z===", "\u{00}AAA", "Zm9vYmFy\t"])
    func strictBase64RejectsEverythingElse(_ text: String) {
        #expect(Crypto.base64Decode(text) == nil)
    }

    @Test(arguments: ["Zg==", "Zh", "+/+/", "A", "Zm9v "])
    func base64URLRejectsPaddingOtherAlphabetAndBadBits(_ text: String) {
        #expect(Crypto.base64URLDecode(text) == nil)
    }

    @Test func hexRoundTrip() {
        #expect(Crypto.hex([0x00, 0xAB, 0xFF]) == "00abff")
        #expect(Crypto.bytes(fromHex: "00ABff") == [0x00, 0xAB, 0xFF])
        #expect(Crypto.bytes(fromHex: "abc") == nil)
        #expect(Crypto.bytes(fromHex: "zz") == nil)
    }

    @Test func constantTimeComparison() {
        #expect(Crypto.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!Crypto.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!Crypto.constantTimeEquals([1, 2, 3], [1, 2]))
    }

    @Test func randomBytesDiffer() {
        let a = Crypto.randomBytes(32), b = Crypto.randomBytes(32)
        #expect(a.count == 32)
        #expect(a != b)
    }

    @Test func aesGCMRoundTripAndTamperDetection() throws {
        let key = Crypto.randomBytes(32), iv = Crypto.randomBytes(12)
        let plaintext = Array("the payload".utf8), aad = Array("header".utf8)
        let sealed = try Crypto.aes256GCMSeal(key: key, iv: iv, plaintext: plaintext, additionalData: aad)
        #expect(sealed.tag.count == 16)
        #expect(try Crypto.aes256GCMOpen(key: key, iv: iv, ciphertext: sealed.ciphertext, tag: sealed.tag, additionalData: aad) == plaintext)
        var tampered = sealed.ciphertext
        tampered[0] ^= 1
        #expect(throws: CryptoError.self) {
            try Crypto.aes256GCMOpen(key: key, iv: iv, ciphertext: tampered, tag: sealed.tag, additionalData: aad)
        }
        #expect(throws: CryptoError.self) {
            try Crypto.aes256GCMOpen(key: key, iv: iv, ciphertext: sealed.ciphertext, tag: sealed.tag, additionalData: [])
        }
        #expect(throws: CryptoError.self) {
            try Crypto.aes256GCMSeal(key: [1, 2, 3], iv: iv, plaintext: plaintext, additionalData: aad)
        }
    }

    /// AES-256-GCM known answer (NIST GCM test vectors, test case 14: zero key, zero IV, one zero block).
    @Test func aesGCMKnownAnswer() throws {
        let sealed = try Crypto.aes256GCMSeal(key: [UInt8](repeating: 0, count: 32), iv: [UInt8](repeating: 0, count: 12),
                                              plaintext: [UInt8](repeating: 0, count: 16), additionalData: [])
        #expect(Crypto.hex(sealed.ciphertext) == "cea7403d4d606b6e074ec5d3baf39d18")
        #expect(Crypto.hex(sealed.tag) == "d0d1c8a799996bf0265b98b5d48ab919")
    }

    @Test func ecdhAgreesFromPointSPKIAndCertificate() throws {
        let alice = try ECPrivateKey.generate(), bob = try ECPrivateKey.generate()
        let fromAlice = try Crypto.p256SharedSecret(privateKey: alice, peerPublicKey: try bob.uncompressedPublicPoint())
        let fromBob = try Crypto.p256SharedSecret(privateKey: bob, peerPublicKey: try alice.uncompressedPublicPoint())
        #expect(fromAlice == fromBob)
        #expect(fromAlice.count == 32)

        let leaf = Fixtures.bytes("leaf.der")
        let spki = try Crypto.certificatePublicKey(der: leaf)
        let viaCertificate = try Crypto.p256SharedSecret(privateKey: alice, peerPublicKey: leaf)
        let viaSPKI = try Crypto.p256SharedSecret(privateKey: alice, peerPublicKey: spki)
        #expect(viaCertificate == viaSPKI)
        #expect(throws: CryptoError.self) { try Crypto.certificatePublicKey(der: Fixtures.bytes("garbage.der")) }
        #expect(throws: CryptoError.self) {
            try Crypto.p256SharedSecret(privateKey: alice, peerPublicKey: [0x04] + [UInt8](repeating: 1, count: 64))
        }
    }

    /// RFC 7518 Appendix C: ECDH-ES key agreement with Concat KDF ("A128GCM", apu "Alice", apv "Bob").
    @Test func concatKDFRFC7518AppendixC() throws {
        let alice = try ECPrivateKey(jwk: .object([
            "kty": .string("EC"), "crv": .string("P-256"),
            "x": .string("gI0GAILBdu7T53akrFmMyGcsF3n5dO7MmwNBHKW5SV0"),
            "y": .string("SLW_xSffzlPWrHEVI30DHM_4egVwt3NQqeUD7nMFpps"),
            "d": .string("0_NxaRPUMQoAJt50Gz8YiTr8gRTwyEaCumd-MToTmIo"),
        ]))
        let bob = try ECPublicJWK(x: "weNJy2HscCSM6AEDTDg04biOvhFhyyWvOHQfeF_PxMQ",
                                  y: "e8lnCO-AlStT-NJVX-crhB7QRYhiix03illJOVAOyck")
        let z = try Crypto.p256SharedSecret(privateKey: alice, peerPublicKey: bob.uncompressedPoint)
        #expect(z == [158, 86, 217, 29, 129, 113, 53, 211, 114, 131, 66, 131, 191, 132, 38, 156,
                      251, 49, 110, 163, 218, 128, 106, 72, 246, 218, 167, 121, 140, 254, 144, 196])
        let key = ConcatKDF.deriveKey(sharedSecret: z, algorithmID: "A128GCM", partyUInfo: Array("Alice".utf8),
                                      partyVInfo: Array("Bob".utf8), keyDataLengthBits: 128)
        #expect(Crypto.base64URLEncode(key) == "VqqN6vgjbSBcIijNcacQGg")
    }

    @Test func concatKDFLongerOutputsUseMoreRounds() {
        let z = [UInt8](repeating: 7, count: 32)
        let long = ConcatKDF.deriveKey(sharedSecret: z, algorithmID: "X", keyDataLengthBits: 512)
        #expect(long.count == 64)
        #expect(Array(long.prefix(32)) != Array(long.suffix(32)))
    }
}

/// RFC 7638 JWK thumbprints: SHA-256 over the key's required members, in lexicographic order,
/// without whitespace, published as `thumbprint` (the base64url form jwcrypto and other JOSE
/// libraries print), e.g. to name a reply key without its coordinates. The member values are
/// written as given: valid keys hold only base64url characters, which JSON needs no escape for.
enum JWKThumbprint {
    /// `{"crv":"P-256","kty":"EC","x":…,"y":…}`.
    static func p256(x: String, y: String) -> Digest256 {
        digest(#"{"crv":"P-256","kty":"EC","x":""#, x, #"","y":""#, y, #""}"#)
    }

    /// `{"crv":"X25519","kty":"OKP","x":…}`.
    static func x25519(x: String) -> Digest256 {
        digest(#"{"crv":"X25519","kty":"OKP","x":""#, x, #""}"#, "", "")
    }

    /// SHA-256 of the five pieces written one after another, in a temporary buffer.
    private static func digest(_ first: String, _ second: String, _ third: String, _ fourth: String, _ fifth: String) -> Digest256 {
        var pieces = (first, second, third, fourth, fifth)
        let length = first.utf8.count + second.utf8.count + third.utf8.count + fourth.utf8.count + fifth.utf8.count
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { buffer in
            var at = 0
            func copy(_ piece: inout String) {
                piece.withUTF8 { text in
                    guard let base = text.baseAddress else { return }
                    (buffer.baseAddress! + at).update(from: base, count: text.count)
                    at += text.count
                }
            }
            copy(&pieces.0); copy(&pieces.1); copy(&pieces.2); copy(&pieces.3); copy(&pieces.4)
            return Digest256.sha256(UnsafeRawBufferPointer(buffer))
        }
    }
}

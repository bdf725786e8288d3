import COpenSSL

/// RFC 7638 JWK thumbprints: SHA-256 over the key's required members, in lexicographic order,
/// without whitespace. They key the public-key cache (one import per distinct reply key) and are
/// published as `thumbprint` (the base64url form jwcrypto and other JOSE libraries print).
///
/// The member values are written as given: valid keys hold only base64url characters, which JSON
/// needs no escape for. Text that is not base64url gives some digest that no valid key has, and
/// the cache compares the members of an entry it finds before using it.
enum JWKThumbprint {
    /// `{"crv":"P-256","kty":"EC","x":…,"y":…}`.
    static func p256(x: String, y: String) -> Digest256 {
        digest([#"{"crv":"P-256","kty":"EC","x":""#, x, #"","y":""#, y, #""}"#])
    }

    /// `{"crv":"X25519","kty":"OKP","x":…}`.
    static func x25519(x: String) -> Digest256 {
        digest([#"{"crv":"X25519","kty":"OKP","x":""#, x, #""}"#])
    }

    private static func digest(_ pieces: [String]) -> Digest256 {
        let length = pieces.reduce(0) { $0 + $1.utf8.count }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { buffer in
            var at = 0
            for piece in pieces {
                var copy = piece
                copy.withUTF8 { text in
                    UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[at..<(at + text.count)])
                        .copyMemory(from: UnsafeRawBufferPointer(text))
                    at += text.count
                }
            }
            return Digest256.sha256(UnsafeRawBufferPointer(buffer))
        }
    }
}

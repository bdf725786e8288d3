@testable import Contract
import Foundation
import Testing

/// The caches and pools that keep the JWE at its floor: reply keys imported once per thumbprint
/// (bounded, FIFO), HMAC keys set up once (bounded), ephemeral keys made ahead and used once.
@Suite("Crypto caches and pools", .timeLimit(.minutes(5)))
struct CryptoCacheTests {
    @Test func replyKeysAreImportedOncePerThumbprintWithinABound() throws {
        let cache = PublicKeyCache(capacity: 3)
        let keys = try (0..<4).map { _ in try ECPrivateKey.generate().publicKey }
        let first = try ECPublicJWK(x: keys[0].x, y: keys[0].y, cache: cache)
        let again = try ECPublicJWK(x: keys[0].x, y: keys[0].y, cache: cache)
        #expect(cache.importCount == 1)
        #expect(first.key === again.key)  // the same imported key, not a second import
        #expect(again.uncompressedPoint == keys[0].uncompressedPoint)
        for key in keys.dropFirst() { _ = try ECPublicJWK(x: key.x, y: key.y, cache: cache) }
        #expect(cache.importCount == 4)
        #expect(cache.count == 3)  // the bound holds
        // FIFO: the oldest (keys[0]) was forgotten and is imported again; the newest is still held.
        _ = try ECPublicJWK(x: keys[3].x, y: keys[3].y, cache: cache)
        #expect(cache.importCount == 4)
        _ = try ECPublicJWK(x: keys[0].x, y: keys[0].y, cache: cache)
        #expect(cache.importCount == 5)
        #expect(cache.count == 3)
        // X25519 keys share the cache, keyed by their own thumbprint.
        let okp = try X25519PrivateKey.generate().publicKey
        _ = try X25519PublicJWK(x: okp.x, cache: cache)
        _ = try X25519PublicJWK(x: okp.x, cache: cache)
        #expect(cache.importCount == 6)
        // A key that fails its checks is not kept.
        #expect(throws: CryptoError.self) { try ECPublicJWK(x: keys[1].x, y: keys[1].x, cache: cache) }
        #expect(throws: CryptoError.self) { try ECPublicJWK(x: keys[1].x, y: keys[1].x, cache: cache) }
        #expect(cache.count == 3)
    }

    @Test func anEntryIsUsedOnlyForTheMembersItWasImportedFrom() throws {
        let cache = PublicKeyCache(capacity: 4)
        let thumbprint = JWKThumbprint.x25519(x: "any")
        let one = try X25519PrivateKey.generate().publicKey, two = try X25519PrivateKey.generate().publicKey
        let first = try cache.entry(thumbprint: thumbprint, x: one.x, y: nil) { () throws(CryptoError) in (one.key, one.rawKey) }
        // Same thumbprint, other members: imported, never served the other key.
        let second = try cache.entry(thumbprint: thumbprint, x: two.x, y: nil) { () throws(CryptoError) in (two.key, two.rawKey) }
        #expect(first.key === one.key && second.key === two.key)
        #expect(cache.importCount == 2)
    }

    @Test func thumbprintsFollowRFC7638() throws {
        // RFC 7638 hashes the required members in lexicographic order with no whitespace.
        let key = try ECPrivateKey.generate().publicKey
        let text = #"{"crv":"P-256","kty":"EC","x":""# + key.x + #"","y":""# + key.y + #""}"#
        #expect(key.thumbprint == Crypto.base64URLEncode(Crypto.sha256(utf8: text)))
        let okp = try X25519PrivateKey.generate().publicKey
        #expect(okp.thumbprint == Crypto.base64URLEncode(Crypto.sha256(utf8: #"{"crv":"X25519","kty":"OKP","x":""# + okp.x + #""}"#)))
    }

    @Test func anEphemeralKeyAgreesOnce() throws {
        let recipient = try ECPrivateKey.generate().publicKey
        let ephemeral = try EphemeralKey(curve: .p256)
        _ = try ephemeral.agree(with: recipient.key)
        #expect(throws: CryptoError.self) { try ephemeral.agree(with: recipient.key) }
        let okp = try EphemeralKey(curve: .x25519)
        _ = try okp.agree(with: try X25519PrivateKey.generate().publicKey.key)
        #expect(throws: CryptoError.self) { try okp.agree(with: try X25519PrivateKey.generate().publicKey.key) }
    }

    @Test(arguments: JWKCurve.allCases)
    func ephemeralKeysAreMadeAheadWithinTheBoundAndNeverHandedOutTwice(curve: JWKCurve) async throws {
        let pool = EphemeralKeyPool(curve: curve, capacity: 4)
        #expect(pool.readyCount == 0)
        // The first take finds the stock empty: made inline, and a background refill starts.
        var headers: [[UInt8]] = [try pool.take().encodedHeader]
        #expect(pool.inlineCount == 1)
        try await waitUntil { pool.readyCount == 4 }
        #expect(pool.aheadCount == 4)
        // Concurrent takers: every key is distinct (none handed out twice), the stock never exceeds its bound.
        let taken = try await withThrowingTaskGroup(of: [[UInt8]].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try (0..<10).map { _ in
                        let key = try pool.take()
                        #expect(pool.readyCount <= 4)
                        return key.encodedHeader
                    }
                }
            }
            var all: [[UInt8]] = []
            for try await part in group { all += part }
            return all
        }
        headers += taken
        #expect(Set(headers).count == 41)
        try await waitUntil { pool.readyCount == 4 }
        // Every key made was either taken once or is still in stock.
        #expect(pool.aheadCount + pool.inlineCount == 41 + pool.readyCount)
    }

    @Test func hmacKeysAreSetUpOnceWithinABound() throws {
        let cache = HMACKeyCache(capacity: 2)
        let template = { (key: [UInt8]) throws -> HMACKeyCache.Template in try #require(cache.template(for: key)) }
        let one = try template([1]), two = try template([2])
        #expect(try template([1]) === one)
        _ = try template([3])
        #expect(cache.count == 2)
        // FIFO: [1] was the oldest, so [3] evicted it and it is set up afresh; [2] was still held.
        #expect(try template([2]) === two)
        #expect(try template([1]) !== one)
        #expect(cache.count == 2)
    }

    private func waitUntil(_ condition: @Sendable () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(20)
        while !condition() {
            guard Date() < deadline else {
                Issue.record("the condition did not hold within 20 s")
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

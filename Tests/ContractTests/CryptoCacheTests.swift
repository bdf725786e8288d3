@testable import Contract
import Foundation
import Synchronization
import TestSupport
import Testing

/// The caches and pools that keep the JWE at its floor: reply keys imported once per distinct key
/// (bounded, FIFO), HMAC keys set up once (bounded), ephemeral keys made ahead and used once, and
/// pooled OpenSSL contexts that answer like fresh ones.
@Suite("Crypto caches and pools", .timeLimit(.minutes(5)))
struct CryptoCacheTests {
    @Test func replyKeysAreImportedOncePerKeyWithinABound() throws {
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
        // X25519 keys share the cache.
        let okp = try X25519PrivateKey.generate().publicKey
        _ = try X25519PublicJWK(x: okp.x, cache: cache)
        _ = try X25519PublicJWK(x: okp.x, cache: cache)
        #expect(cache.importCount == 6)
        // A key that fails its checks is not kept.
        #expect(throws: CryptoError.self) { try ECPublicJWK(x: keys[1].x, y: keys[1].x, cache: cache) }
        #expect(throws: CryptoError.self) { try ECPublicJWK(x: keys[1].x, y: keys[1].x, cache: cache) }
        #expect(cache.count == 3)
    }

    @Test func theSameXOnTheTwoCurvesNamesTwoKeys() throws {
        let cache = PublicKeyCache(capacity: 4)
        let p256 = try ECPrivateKey.generate().publicKey
        // A P-256 x coordinate is 32 bytes: read as an X25519 key it is another key, with its own entry.
        let ec = try ECPublicJWK(x: p256.x, y: p256.y, cache: cache)
        let okp = try X25519PublicJWK(x: p256.x, cache: cache)
        #expect(cache.importCount == 2 && cache.count == 2)
        #expect(!ec.key.isX25519 && okp.key.isX25519)
        #expect(try X25519PublicJWK(x: p256.x, cache: cache).key === okp.key)
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
        try await waitUntil("the first refill: \(pool.readyCount) ready, \(pool.aheadCount) made ahead, failure \(String(describing: pool.refillFailure))") {
            pool.readyCount == 4
        }
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
        // Once the takes stop, a refill they started runs until the stock is full; the last takes may
        // have left it at half or more, which starts none: the stock ends between half and full.
        try await waitUntil("the refill after the takes: \(pool.readyCount) ready, failure \(String(describing: pool.refillFailure))") {
            !pool.isRefilling
        }
        #expect(pool.refillFailure == nil)
        #expect((2...4).contains(pool.readyCount), "\(pool.readyCount) ready")
        // Every key made was either taken once or is still in stock.
        #expect(pool.aheadCount + pool.inlineCount == 41 + pool.readyCount)
    }

    /// Each pool refills on a queue of its own: a refill that takers keep from ever filling its
    /// stock (it runs for as long as the stock is below full) does not hold another pool's refill.
    @Test func aPoolKeptBusyByTakersDoesNotHoldAnotherPoolsRefill() async throws {
        final class Flag: Sendable { let raised = Atomic<Bool>(false) }
        let busy = EphemeralKeyPool(curve: .p256, capacity: 64), other = EphemeralKeyPool(curve: .x25519, capacity: 4)
        let done = Flag()
        // Three takers, for up to 30 s, take keys faster than one refill makes them: the busy pool's
        // refill never finds its stock full. They run on threads of their own: on Dispatch's global
        // queue they would hold the threads this test's own tasks resume on.
        let takers = Task {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        await DedicatedThread.run(name: "test-key-taker") {
                            let end = ContinuousClock.now.advanced(by: .seconds(30))
                            while !done.raised.load(ordering: .relaxed) && ContinuousClock.now < end { _ = try? busy.take() }
                        }
                    }
                }
            }
        }
        _ = try await Eventually.holds(within: .seconds(20)) { busy.aheadCount > 0 }
        _ = try other.take()
        let refilled = try await Eventually.holds(within: .seconds(20)) { other.readyCount == 4 }
        let takersStillRunning = !done.raised.exchange(true, ordering: .relaxed)
        await takers.value
        #expect(refilled && takersStillRunning, "the other pool refilled while the busy pool's takers ran: \(refilled), \(takersStillRunning)")
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

    /// Pooled digest, HMAC and cipher contexts are re-initialised between uses: known answers hold
    /// call after call, across keys and threads.
    @Test func pooledContextsAnswerLikeFreshOnes() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for round in 0..<50 {
                        // RFC 4231 test cases 1 and 2 (two keys, each with its own pooled copies).
                        #expect(Crypto.hex(Crypto.hmacSHA256(key: Crypto.bytes(fromHex: "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b") ?? [], data: Array("Hi There".utf8)))
                                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
                        #expect(Crypto.hex(Crypto.hmacSHA256(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8)))
                                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
                        #expect(Crypto.hex(Crypto.sha256(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
                        // A seal under another key between the known answers (NIST GCM test cases 13 and 14).
                        let key = Crypto.randomBytes(32), iv = Crypto.randomBytes(12), plaintext = Crypto.randomBytes(round)
                        let sealed = try Crypto.aes256GCMSeal(key: key, iv: iv, plaintext: plaintext, additionalData: [1, 2, 3])
                        #expect(try Crypto.aes256GCMOpen(key: key, iv: iv, ciphertext: sealed.ciphertext, tag: sealed.tag,
                                                         additionalData: [1, 2, 3]) == plaintext)
                        let zeros = [UInt8](repeating: 0, count: 32), zeroIV = [UInt8](repeating: 0, count: 12)
                        let empty = try Crypto.aes256GCMSeal(key: zeros, iv: zeroIV, plaintext: [], additionalData: [])
                        #expect(empty.ciphertext.isEmpty && Crypto.hex(empty.tag) == "530f8afbc74536b9a963b4f1c4cb738b")
                        let block = try Crypto.aes256GCMSeal(key: zeros, iv: zeroIV, plaintext: [UInt8](repeating: 0, count: 16), additionalData: [])
                        #expect(Crypto.hex(block.ciphertext) == "cea7403d4d606b6e074ec5d3baf39d18")
                        #expect(Crypto.hex(block.tag) == "d0d1c8a799996bf0265b98b5d48ab919")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(OpenSSLAlgorithms.shared.digestContexts.idleCount >= 1)
        #expect(OpenSSLAlgorithms.shared.gcmEncryptionContexts.idleCount >= 1)
    }

    private func waitUntil(_ what: @autoclosure () -> String, _ condition: @Sendable () -> Bool) async throws {
        let held = try await Eventually.holds(within: .seconds(20), every: .milliseconds(5), condition)
        #expect(held, "not within 20 s: \(what())")
    }
}

import Contract
import Testing

@Suite("Nonce guard", .timeLimit(.minutes(5)))
struct NonceGuardTests {
    @Test func freshThenReusedThenExpired() {
        let guardian = NonceGuard(horizonMs: 1_000, maxEntries: 100)
        let nonce = Sensitive("3vT9Kw==")
        #expect(guardian.checkAndRecord(nonce, requestID: "a", nowMs: 0) == .fresh)
        #expect(guardian.checkAndRecord(nonce, requestID: "b", nowMs: 999) == .reused)
        #expect(guardian.checkAndRecord(nonce, requestID: "a", nowMs: 999) == .repeatedBySameRequest)
        #expect(!NonceCheck.reused.isFresh)
        #expect(guardian.checkAndRecord(nonce, requestID: "b", nowMs: 1_000) == .fresh)  // past the horizon
        #expect(guardian.checkAndRecord(Sensitive("other=="), requestID: "c", nowMs: 1_000).isFresh)
    }

    @Test func expiresOldEntriesAndStaysBounded() {
        let guardian = NonceGuard(horizonMs: 100, maxEntries: 1_000)
        for index in 0..<5_000 {
            #expect(guardian.checkAndRecord(Sensitive("n\(index)"), requestID: "r\(index)", nowMs: Int64(index)) == .fresh)
        }
        #expect(guardian.count <= 101)
        #expect(guardian.evictedBeforeHorizon == 0)

        let small = NonceGuard(horizonMs: 1_000_000, maxEntries: 10)
        for index in 0..<50 {
            _ = small.checkAndRecord(Sensitive("n\(index)"), requestID: "r", nowMs: 0)
        }
        #expect(small.count == 10)
        #expect(small.evictedBeforeHorizon == 40)
        #expect(small.checkAndRecord(Sensitive("n49"), requestID: "x", nowMs: 1) == .reused)  // newest kept
        #expect(small.checkAndRecord(Sensitive("n0"), requestID: "x", nowMs: 1) == .fresh)  // oldest forgotten
    }

    @Test func isThreadSafe() async {
        let guardian = NonceGuard(horizonMs: 60_000, maxEntries: 100_000)
        let fresh = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var count = 0
                    for index in 0..<2_000 where guardian.checkAndRecord(Sensitive("n\(index)"), requestID: "w\(worker)", nowMs: 1).isFresh {
                        count += 1
                    }
                    return count
                }
            }
            return await group.reduce(0, +)
        }
        #expect(fresh == 2_000)  // each nonce was fresh for exactly one worker
        #expect(guardian.count == 2_000)
    }
}

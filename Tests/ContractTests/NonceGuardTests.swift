import Contract
import Testing

@Suite("Nonce guard", .timeLimit(.minutes(5)))
struct NonceGuardTests {
    /// Request `requestID` of `program`.
    static func id(_ requestID: String, program: String = "p") -> RequestIdentity { RequestIdentity(program: program, requestID: requestID) }

    @Test func freshThenReusedThenExpired() {
        let guardian = NonceGuard(horizonMs: 1_000, maxEntries: 100)
        let nonce = Sensitive("3vT9Kw==")
        #expect(guardian.checkAndRecord(nonce, identity: Self.id("a"), nowMs: 0) == .fresh)
        #expect(guardian.checkAndRecord(nonce, identity: Self.id("b"), nowMs: 999) == .reused)
        #expect(guardian.checkAndRecord(nonce, identity: Self.id("a"), nowMs: 999) == .repeatedBySameRequest)
        #expect(!NonceCheck.reused.isFresh)
        #expect(guardian.checkAndRecord(nonce, identity: Self.id("b"), nowMs: 1_000) == .fresh)  // past the horizon
        #expect(guardian.checkAndRecord(Sensitive("other=="), identity: Self.id("c"), nowMs: 1_000).isFresh)
    }

    /// CONTRACT section 12: a nonce is remembered per program. A message under another program
    /// carrying the same nonce (a keyless producer copying a handshake seen in clear) neither
    /// spends it for this program nor is judged against it; within a program it is single-use.
    @Test func scopedByProgram() {
        let guardian = NonceGuard(horizonMs: 60_000, maxEntries: 100)
        let nonce = Sensitive("3vT9Kw==")
        #expect(guardian.checkAndRecord(nonce, identity: Self.id("r", program: "open"), nowMs: 0) == .fresh)
        #expect(guardian.checkAndRecord(nonce, identity: Self.id("r", program: "signed"), nowMs: 1) == .fresh,
                "the other program's copy spent this program's nonce")
        #expect(guardian.checkAndRecord(nonce, identity: Self.id("other", program: "signed"), nowMs: 2) == .reused)
        #expect(guardian.checkAndRecord(nonce, identity: Self.id("r", program: "signed"), nowMs: 3) == .repeatedBySameRequest)
        #expect(guardian.checkAndRecord(nonce, identity: Self.id("other", program: "open"), nowMs: 4) == .reused)
    }

    @Test func expiresOldEntriesAndStaysBounded() {
        let guardian = NonceGuard(horizonMs: 100, maxEntries: 1_000)
        for index in 0..<5_000 {
            #expect(guardian.checkAndRecord(Sensitive("n\(index)"), identity: Self.id("r\(index)"), nowMs: Int64(index)) == .fresh)
        }
        #expect(guardian.count <= 101)
        #expect(guardian.evictedBeforeHorizon == 0)

        let small = NonceGuard(horizonMs: 1_000_000, maxEntries: 10)
        for index in 0..<50 {
            _ = small.checkAndRecord(Sensitive("n\(index)"), identity: Self.id("r"), nowMs: 0)
        }
        #expect(small.count == 10)
        #expect(small.evictedBeforeHorizon == 40)
        #expect(small.checkAndRecord(Sensitive("n49"), identity: Self.id("x"), nowMs: 1) == .reused)  // newest kept
        #expect(small.checkAndRecord(Sensitive("n0"), identity: Self.id("x"), nowMs: 1) == .fresh)  // oldest forgotten
    }

    @Test func isThreadSafe() async {
        let guardian = NonceGuard(horizonMs: 60_000, maxEntries: 100_000)
        let fresh = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var count = 0
                    for index in 0..<2_000 where guardian.checkAndRecord(Sensitive("n\(index)"), identity: Self.id("w\(worker)"), nowMs: 1).isFresh {
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

import Testing
@testable import Pipeline

@Suite("Token bucket, circuit breaker and offset tracker", .timeLimit(.minutes(10)))
struct IsolationPrimitivesTests {
    @Test func tokenBucketRefillsAtItsRate() {
        var bucket = TokenBucket(ratePerSecond: 4, burst: 2, nowMs: 0)
        let check1 = bucket.tryTake(nowMs: 0)
        #expect(check1)
        let check2 = bucket.tryTake(nowMs: 0)
        #expect(check2)
        let check3 = !bucket.tryTake(nowMs: 0)
        #expect(check3)
        let check4 = bucket.nextTokenAtMs(nowMs: 0) == 250
        #expect(check4)
        let check5 = !bucket.tryTake(nowMs: 249)
        #expect(check5)
        let check6 = bucket.tryTake(nowMs: 250)
        #expect(check6)
        let check7 = bucket.available(nowMs: 10_000) == 2
        #expect(check7, "never above burst")
    }

    @Test func breakerNeedsMinimumCallsAndForgetsOldOutcomes() {
        var settings = CircuitBreaker.Settings()
        settings.windowSeconds = 2
        settings.minimumCalls = 3
        settings.failureRateThreshold = 0.7
        var breaker = CircuitBreaker(settings: settings)
        let check8 = breaker.record(success: false, wasProbe: false, nowMs: 0) == nil
        #expect(check8)
        let check9 = breaker.record(success: false, wasProbe: false, nowMs: 100) == nil
        #expect(check9)
        // Two seconds later the old failures fell out of the window.
        let check10 = breaker.record(success: false, wasProbe: false, nowMs: 2_500) == nil
        #expect(check10)
        #expect(breaker.state == .closed)
        let check11 = breaker.record(success: false, wasProbe: false, nowMs: 2_600) == nil
        #expect(check11)
        let check12 = breaker.record(success: true, wasProbe: false, nowMs: 2_700) == nil
        #expect(check12)
        let check13 = breaker.record(success: false, wasProbe: false, nowMs: 2_800) == .open
        #expect(check13)
    }

    @Test func failedProbeReopens() {
        var settings = CircuitBreaker.Settings()
        settings.minimumCalls = 1
        settings.openDurationMs = 100
        var breaker = CircuitBreaker(settings: settings)
        let check14 = breaker.record(success: false, wasProbe: false, nowMs: 0) == .open
        #expect(check14)
        let check15 = breaker.permission(nowMs: 50).0 == .reject
        #expect(check15)
        let (permission, change) = breaker.permission(nowMs: 100)
        #expect(permission == .probe && change == .halfOpen)
        let check16 = breaker.record(success: false, wasProbe: true, nowMs: 120) == .open
        #expect(check16)
        #expect(breaker.wouldReject(nowMs: 150))
    }

    @Test func offsetTrackerCommitsOnlyContiguousCompletions() {
        var tracker = PartitionOffsetTracker()
        for offset in [10, 11, 12, 14, 15] as [Int64] { tracker.track(offset) }
        #expect(tracker.committableOffset == nil)
        tracker.complete(12)
        tracker.complete(14)
        #expect(tracker.committableOffset == nil, "10 is still running")
        tracker.complete(10)
        #expect(tracker.committableOffset == 11)
        tracker.complete(11)
        #expect(tracker.committableOffset == 15, "12 and 14 were done; the gap at 13 is not an offset we own")
        let check17 = !tracker.complete(11)
        #expect(check17, "completing twice is refused")
        let check18 = !tracker.complete(99)
        #expect(check18, "unknown offsets are refused")
        #expect(tracker.pendingCount == 1)
        tracker.complete(15)
        #expect(tracker.committableOffset == 16)
        #expect(tracker.isDrained)
    }

    @Test func offsetTrackerHandlesLongRuns() {
        var tracker = PartitionOffsetTracker()
        for offset in Int64(0)..<10_000 { tracker.track(offset) }
        for offset in stride(from: Int64(9_999), through: 1, by: -1) { tracker.complete(offset) }
        #expect(tracker.committableOffset == nil)
        tracker.complete(0)
        #expect(tracker.committableOffset == 10_000)
    }
}

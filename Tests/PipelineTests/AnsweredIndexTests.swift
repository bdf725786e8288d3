import Contract
import Kafka
import Testing
@testable import Pipeline

/// The duplicate horizon's index, with time passed in: bounds, evictions, expiry.
@Suite("Duplicate horizon index", .timeLimit(.minutes(5)))
struct AnsweredIndexTests {
    static let hour: Int64 = 3_600_000

    static func identity(_ requestID: String, program: String = "p") -> RequestIdentity {
        RequestIdentity(program: program, requestID: requestID)
    }

    @Test("an answered id is found until its horizon ends, and not after")
    func horizon() {
        var index = AnsweredIndex(maxEntries: 100)
        index.insert(.init(program: "p", requestID: "req-1", partition: 0), expiresAtMs: 24 * Self.hour, nowMs: 0)
        #expect(index.contains(.init(program: "p", requestID: "req-1", partition: 0), nowMs: Self.hour), "an hour later")
        #expect(!index.contains(.init(program: "p", requestID: "req-2", partition: 0), nowMs: Self.hour))
        #expect(!index.contains(.init(program: "p", requestID: "req-1", partition: 0), nowMs: 24 * Self.hour + 1_000), "past the horizon")
        index.dropExpired(nowMs: 25 * Self.hour)
        #expect(index.count == 0)
        index.insert(.init(program: "p", requestID: "old", partition: 0), expiresAtMs: 10, nowMs: 20_000)
        #expect(index.count == 0, "an answer already past its horizon is not held")
    }

    @Test("a flood of distinct ids: the index stays within its bound, the oldest go first and are counted")
    func flood() {
        let bound = 10_000
        var index = AnsweredIndex(maxEntries: bound)
        let flood = 250_000
        for number in 0..<flood {
            index.insert(.init(program: "p", requestID: "flood-\(number)", partition: 0), expiresAtMs: 24 * Self.hour, nowMs: Int64(number))
            #expect(index.count <= bound)
        }
        #expect(index.count == bound)
        #expect(index.evictedBeforeHorizon == flood - bound)
        // The newest `bound` are all there, the older ones all gone.
        var found = 0
        for number in (flood - bound)..<flood where index.contains(.init(program: "p", requestID: "flood-\(number)", partition: 0), nowMs: Int64(flood)) { found += 1 }
        #expect(found == bound)
        var stale = 0
        for number in 0..<(flood - bound) where index.contains(.init(program: "p", requestID: "flood-\(number)", partition: 0), nowMs: Int64(flood)) { stale += 1 }
        #expect(stale == 0)
        #expect(index.allocatedBytes <= bound * 16 + 4 * 2 * 16_384, "ring and table stay at the bound: \(index.allocatedBytes) bytes")
    }

    @Test("eviction keeps every other entry findable (backward-shift deletion), against a reference set")
    func againstReference() {
        var index = AnsweredIndex(maxEntries: 257)
        var generator = SystemRandomNumberGenerator()
        var order: [String] = []
        for step in 0..<20_000 {
            let id = "r\(UInt32.random(in: 0...50_000, using: &generator))"
            let had = order.contains(id)
            index.insert(.init(program: "p", requestID: id, partition: 0), expiresAtMs: .max / 2, nowMs: Int64(step))
            if !had {
                order.append(id)
                if order.count > 257 { order.removeFirst() }
            }
            if step % 997 == 0 {
                for held in order { #expect(index.contains(.init(program: "p", requestID: held, partition: 0), nowMs: Int64(step))) }
            }
        }
        #expect(index.count == order.count)
    }

    @Test("answers per partition: recorded only for owned partitions, answering only while owned, kept across a release")
    func perPartition() {
        let horizon = DuplicateHorizon(horizonMs: Self.hour, maxBytes: 1 << 20, shares: ["p": 1])
        let p0 = TopicPartition(topic: "requests", partition: 0)
        let p1 = TopicPartition(topic: "requests", partition: 1)
        horizon.record(Self.identity("a"), in: p0, answeredAtMs: 0, nowMs: 0)
        #expect(!horizon.contains(Self.identity("a"), in: p0, nowMs: 0), "not owned: neither recorded nor answering")
        horizon.install(p0, readThrough: 0)
        horizon.install(p1, readThrough: 0)
        for id in ["a", "b", "c"] { horizon.record(Self.identity(id), in: p0, answeredAtMs: 0, nowMs: 0) }
        #expect(horizon.contains(Self.identity("c"), in: p0, nowMs: 1_000) && horizon.contains(Self.identity("a"), in: p0, nowMs: 1_000))
        #expect(!horizon.contains(Self.identity("c"), in: p1, nowMs: 1_000), "a request's answers are in its own partition")
        #expect(horizon.count == 3)
        horizon.remove([p0], nowMs: 1_000)
        #expect(horizon.count == 3, "a released partition's answers stay for its next assignment")
        #expect(!horizon.contains(Self.identity("c"), in: p0, nowMs: 1_000), "released: no longer answers")
        #expect(horizon.read(p1, nowMs: 10 * Self.hour).sinceMs == 9 * Self.hour)
    }

    @Test("a released partition's read position is kept for one horizon, resumed by the next read, its answers answering again once installed")
    func keptAcrossRelease() throws {
        let horizon = DuplicateHorizon(horizonMs: Self.hour, maxBytes: 1 << 20, shares: ["p": 1])
        let p0 = TopicPartition(topic: "requests", partition: 0)
        let p1 = TopicPartition(topic: "requests", partition: 1)
        #expect(horizon.read(p0, nowMs: 0).keptReadThrough == nil, "nothing kept before a first assignment")
        horizon.install(p0, readThrough: 42)
        horizon.record(Self.identity("a"), in: p0, answeredAtMs: 500, nowMs: 500)
        horizon.remove([p0], nowMs: 1_000)
        #expect(horizon.keptCount == 1)
        #expect(horizon.read(p0, nowMs: 2_000).keptReadThrough == 42, "the offset its answers were complete up to")
        #expect(horizon.read(p1, nowMs: 2_000).keptReadThrough == nil, "kept per partition")
        horizon.install(p0, readThrough: 50)
        #expect(horizon.keptCount == 0 && horizon.contains(Self.identity("a"), in: p0, nowMs: 2_000))
        horizon.remove([p0], nowMs: 3_000)
        #expect(horizon.read(p0, nowMs: 3_000 + Self.hour - 1).keptReadThrough == 50)
        #expect(horizon.read(p0, nowMs: 3_000 + Self.hour).keptReadThrough == nil && horizon.keptCount == 0,
                "dropped once none of its answers can count")
    }

    @Test("one byte budget for every partition, owned or released: 64 partitions of answers stay within it")
    func budgetAcrossPartitions() {
        let budget = 256 << 10
        let horizon = DuplicateHorizon(horizonMs: Self.hour, maxBytes: budget, shares: ["p": 3, "q": 1])
        let partitions = (0..<64).map { TopicPartition(topic: "requests", partition: Int32($0)) }
        for (number, partition) in partitions.enumerated() {
            horizon.install(partition, readThrough: 0)
            for id in 0..<2_000 {
                horizon.record(Self.identity("r\(number)-\(id)", program: id % 2 == 0 ? "p" : "q"), in: partition, answeredAtMs: 0, nowMs: 0)
            }
            // Every other partition released as it goes: its answers are held in the same budget.
            if number % 2 == 1 { horizon.remove([partition], nowMs: 0) }
            #expect(horizon.allocatedBytes <= budget, "\(horizon.allocatedBytes) bytes after \(number + 1) partitions, budget \(budget)")
        }
        // 128,000 answers offered; the shares hold what fits, p about three times what q holds.
        let maxP = horizon.maxEntries["p"] ?? 0, maxQ = horizon.maxEntries["q"] ?? 0
        #expect(horizon.count == maxP + maxQ && maxP > 2 * maxQ && maxQ > 500)
        #expect(horizon.evictedBeforeHorizon["p"] == 64_000 - maxP && horizon.evictedBeforeHorizon["q"] == 64_000 - maxQ)
        #expect(horizon.evictedBeforeHorizon[DuplicateHorizon.otherShare] == 0)
        #expect(AnsweredIndex.allocatedBytes(maxEntries: maxP) + AnsweredIndex.allocatedBytes(maxEntries: maxQ)
                + AnsweredIndex.allocatedBytes(maxEntries: horizon.maxEntries["other"] ?? 0) <= budget)
    }

    @Test("a flood of one program's distinct answers evicts only its own: another program's answer is still a duplicate")
    func floodEvictsOnlyItsOwn() {
        let horizon = DuplicateHorizon(horizonMs: Self.hour, maxBytes: 64 << 10, shares: ["signed": 1, "open": 1])
        let partition = TopicPartition(topic: "requests", partition: 0)
        horizon.install(partition, readThrough: 0)
        horizon.record(Self.identity("kept", program: "signed"), in: partition, answeredAtMs: 0, nowMs: 0)
        let flood = 10 * (horizon.maxEntries["open"] ?? 0)
        for number in 0..<flood { horizon.record(Self.identity("flood-\(number)", program: "open"), in: partition, answeredAtMs: 0, nowMs: 0) }
        // An unconfigured program's flood too goes to a share of its own.
        for number in 0..<flood { horizon.record(Self.identity("stray-\(number)", program: "gone"), in: partition, answeredAtMs: 0, nowMs: 0) }
        #expect(horizon.contains(Self.identity("kept", program: "signed"), in: partition, nowMs: 1_000),
                "the signed program's answer was pushed out by another program's flood")
        #expect(horizon.evictedBeforeHorizon["signed"] == 0 && (horizon.evictedBeforeHorizon["open"] ?? 0) > 0)
        #expect((horizon.evictedBeforeHorizon[DuplicateHorizon.otherShare] ?? 0) > 0)
    }

    static let program = #""programs": {"p": {"issuer": "imprint", "base_url": "http://127.0.0.1:1/imprint", "api_key_env": "K"}}"#

    @Test("config: horizon 24 h by default, index bound and limits scope read; config check's retention warning")
    func configuration() throws {
        let defaults = try WorkerConfiguration.load(json: "{\(Self.program)}", environment: [:], workerID: "w", strict: true, requireSecrets: false).0
        #expect(defaults.duplicateHorizonMs == 24 * Self.hour)
        #expect(defaults.duplicateIndexMaxBytes == 256 << 20 && defaults.programs["p"]?.duplicateShare == 1)
        #expect(!defaults.scheduler.limitsPerWorker)
        let set = try WorkerConfiguration.load(
            json: "{\(Self.program), " + #""duplicates": {"horizon_seconds": 3600, "max_bytes": 1048576}, "scheduler": {"limits_scope": "worker"}}"#,
            environment: [:], workerID: "w", strict: true, requireSecrets: false).0
        #expect(set.duplicateHorizonMs == Self.hour && set.duplicateIndexMaxBytes == 1 << 20 && set.scheduler.limitsPerWorker)
        #expect(throws: ConfigurationError.self) {
            _ = try WorkerConfiguration.load(json: "{\(Self.program), " + #""scheduler": {"limits_scope": "everyone"}}"#, environment: [:], workerID: "w",
                                             strict: true, requireSecrets: false)
        }
        #expect(TopicLayout.production.horizonIssues(horizonMs: 24 * Self.hour).isEmpty)
        var short = TopicLayout.production
        short.topics[.markers]?.configs["retention.ms"] = "3600000"
        let issues = short.horizonIssues(horizonMs: 24 * Self.hour)
        #expect(issues.count == 1 && issues.first?.severity == .warning)
        #expect(issues.first?.keyPath == "topics.markers.configs.retention.ms")
    }

    @Test("answers are held per identity: another program's request with the same id is not answered; an earlier version's answer (no program) counts for every program")
    func identities() {
        let horizon = DuplicateHorizon(horizonMs: Self.hour, maxBytes: 1 << 20, shares: ["open": 1, "signed": 1])
        let partition = TopicPartition(topic: "requests", partition: 0)
        // What catch-up reads: one marker of this version (program `open`), one of an earlier version.
        horizon.add([.init(program: "open", fingerprint: .init(program: "open", requestID: "r-1", partition: 0), expiresAtMs: Self.hour),
                     .init(program: nil, fingerprint: .init(program: nil, requestID: "r-legacy", partition: 0), expiresAtMs: Self.hour)], nowMs: 0)
        horizon.install(partition, readThrough: 0)
        #expect(horizon.contains(Self.identity("r-1", program: "open"), in: partition, nowMs: 1_000))
        #expect(!horizon.contains(Self.identity("r-1", program: "signed"), in: partition, nowMs: 1_000),
                "program open's answer says nothing of program signed's r-1")
        #expect(horizon.contains(Self.identity("r-legacy", program: "open"), in: partition, nowMs: 1_000)
                && horizon.contains(Self.identity("r-legacy", program: "signed"), in: partition, nowMs: 1_000))
        horizon.record(Self.identity("r-2", program: "signed"), in: partition, answeredAtMs: 0, nowMs: 0)
        #expect(horizon.contains(Self.identity("r-2", program: "signed"), in: partition, nowMs: 1_000))
        #expect(!horizon.contains(Self.identity("r-2", program: "open"), in: partition, nowMs: 1_000))
    }

}

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
        index.insert(.init(program: "p", requestID: "req-1"), expiresAtMs: 24 * Self.hour, nowMs: 0)
        #expect(index.contains(.init(program: "p", requestID: "req-1"), nowMs: Self.hour), "an hour later")
        #expect(!index.contains(.init(program: "p", requestID: "req-2"), nowMs: Self.hour))
        #expect(!index.contains(.init(program: "p", requestID: "req-1"), nowMs: 24 * Self.hour + 1_000), "past the horizon")
        index.dropExpired(nowMs: 25 * Self.hour)
        #expect(index.count == 0)
        index.insert(.init(program: "p", requestID: "old"), expiresAtMs: 10, nowMs: 20_000)
        #expect(index.count == 0, "an answer already past its horizon is not held")
    }

    @Test("a flood of distinct ids: the index stays within its bound, the oldest go first and are counted")
    func flood() {
        let bound = 10_000
        var index = AnsweredIndex(maxEntries: bound)
        let flood = 250_000
        for number in 0..<flood {
            index.insert(.init(program: "p", requestID: "flood-\(number)"), expiresAtMs: 24 * Self.hour, nowMs: Int64(number))
            #expect(index.count <= bound)
        }
        #expect(index.count == bound)
        #expect(index.evictedBeforeHorizon == flood - bound)
        // The newest `bound` are all there, the older ones all gone.
        var found = 0
        for number in (flood - bound)..<flood where index.contains(.init(program: "p", requestID: "flood-\(number)"), nowMs: Int64(flood)) { found += 1 }
        #expect(found == bound)
        var stale = 0
        for number in 0..<(flood - bound) where index.contains(.init(program: "p", requestID: "flood-\(number)"), nowMs: Int64(flood)) { stale += 1 }
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
            index.insert(.init(program: "p", requestID: id), expiresAtMs: .max / 2, nowMs: Int64(step))
            if !had {
                order.append(id)
                if order.count > 257 { order.removeFirst() }
            }
            if step % 997 == 0 {
                for held in order { #expect(index.contains(.init(program: "p", requestID: held), nowMs: Int64(step))) }
            }
        }
        #expect(index.count == order.count)
    }

    @Test("a horizon index per partition: recorded only for indexed partitions, dropped with them, evictions kept")
    func perPartition() {
        let horizon = DuplicateHorizon(horizonMs: Self.hour, maxEntriesPerPartition: 2)
        let p0 = TopicPartition(topic: "requests", partition: 0)
        let p1 = TopicPartition(topic: "requests", partition: 1)
        horizon.record(Self.identity("a"), in: p0, answeredAtMs: 0, nowMs: 0)
        #expect(!horizon.contains(Self.identity("a"), in: p0, nowMs: 0), "not indexed: not owned")
        horizon.install(p0, index: .init(answered: AnsweredIndex(maxEntries: 2), readThrough: 0))
        for id in ["a", "b", "c"] { horizon.record(Self.identity(id), in: p0, answeredAtMs: 0, nowMs: 0) }
        #expect(horizon.contains(Self.identity("c"), in: p0, nowMs: 1_000) && !horizon.contains(Self.identity("a"), in: p0, nowMs: 1_000))
        #expect(!horizon.contains(Self.identity("c"), in: p1, nowMs: 1_000), "a request's answers are in its own partition")
        #expect(horizon.count == 2 && horizon.evictedBeforeHorizon == 1)
        horizon.remove([p0], nowMs: 1_000)
        #expect(horizon.count == 0 && horizon.evictedBeforeHorizon == 1)
        #expect(!horizon.contains(Self.identity("c"), in: p0, nowMs: 1_000), "released: no longer answers")
        #expect(horizon.read(p1, nowMs: 10 * Self.hour).sinceMs == 9 * Self.hour)
    }

    @Test("a released partition's index is kept with its read position for one horizon, resumed by the next read, dropped by its install")
    func keptAcrossRelease() throws {
        let horizon = DuplicateHorizon(horizonMs: Self.hour, maxEntriesPerPartition: 10)
        let p0 = TopicPartition(topic: "requests", partition: 0)
        let p1 = TopicPartition(topic: "requests", partition: 1)
        #expect(horizon.read(p0, nowMs: 0).kept == nil, "nothing kept before a first assignment")
        horizon.install(p0, index: .init(answered: AnsweredIndex(maxEntries: 10), readThrough: 42))
        horizon.record(Self.identity("a"), in: p0, answeredAtMs: 500, nowMs: 500)
        horizon.remove([p0], nowMs: 1_000)
        #expect(horizon.keptCount == 1)
        let resumed = try #require(horizon.read(p0, nowMs: 2_000).kept)
        #expect(resumed.readThrough == 42 && resumed.answered.contains(.init(Self.identity("a")), nowMs: 2_000),
                "the index with its own answers and the offset it was complete up to")
        #expect(horizon.read(p1, nowMs: 2_000).kept == nil, "kept per partition")
        horizon.install(p0, index: resumed)
        #expect(horizon.keptCount == 0 && horizon.contains(Self.identity("a"), in: p0, nowMs: 2_000))
        horizon.remove([p0], nowMs: 3_000)
        #expect(horizon.read(p0, nowMs: 3_000 + Self.hour - 1).kept != nil)
        #expect(horizon.read(p0, nowMs: 3_000 + Self.hour).kept == nil && horizon.keptCount == 0,
                "dropped once none of its answers can count")
    }

    static let program = #""programs": {"p": {"issuer": "imprint", "base_url": "http://127.0.0.1:1/imprint", "api_key_env": "K"}}"#

    @Test("config: horizon 24 h by default, index bound and limits scope read; config check's retention warning")
    func configuration() throws {
        let defaults = try WorkerConfiguration.load(json: "{\(Self.program)}", environment: [:], workerID: "w", strict: true, requireSecrets: false).0
        #expect(defaults.duplicateHorizonMs == 24 * Self.hour)
        #expect(defaults.duplicateIndexMaxEntriesPerPartition == 2_000_000)
        #expect(!defaults.scheduler.limitsPerWorker)
        let set = try WorkerConfiguration.load(
            json: "{\(Self.program), " + #""duplicates": {"horizon_seconds": 3600, "max_entries_per_partition": 1000}, "scheduler": {"limits_scope": "worker"}}"#,
            environment: [:], workerID: "w", strict: true, requireSecrets: false).0
        #expect(set.duplicateHorizonMs == Self.hour && set.duplicateIndexMaxEntriesPerPartition == 1000 && set.scheduler.limitsPerWorker)
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
        let horizon = DuplicateHorizon(horizonMs: Self.hour, maxEntriesPerPartition: 100)
        let partition = TopicPartition(topic: "requests", partition: 0)
        var index = AnsweredIndex(maxEntries: 100)
        // What catch-up reads: one marker of this version (program `open`), one of an earlier version.
        index.insert(.init(program: "open", requestID: "r-1"), expiresAtMs: Self.hour, nowMs: 0)
        index.insert(.init(program: nil, requestID: "r-legacy"), expiresAtMs: Self.hour, nowMs: 0)
        horizon.install(partition, index: .init(answered: index, readThrough: 0))
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

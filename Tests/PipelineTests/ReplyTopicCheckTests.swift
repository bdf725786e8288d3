import Foundation
import Dispatch
import Contract
import Synchronization
import Testing
@testable import Pipeline

/// `ReplyTopicCheck` with metadata and time passed in: a route to a topic the
/// cluster lacks, or past a topic's last partition, is refused; metadata is asked at most once a
/// second for unknown names and once a minute otherwise; unreadable metadata refuses nothing.
@Suite("Reply topic check", .timeLimit(.minutes(1)))
struct ReplyTopicCheckTests {
    final class Cluster: Sendable {
        let counts = Mutex<[String: Int?]?>([String: Int?](dictionaryLiteral: ("replies", 4), ("forbidden", nil)))
        let lookups = Mutex(0)
        let now = Mutex<Int64>(1_000_000)

        func check() -> ReplyTopicCheck {
            ReplyTopicCheck(clock: { self.now.withLock { $0 } }) {
                self.lookups.withLock { $0 += 1 }
                return self.counts.withLock { $0 }
            }
        }
    }

    @Test("a missing topic or a partition past the end is refused; a listed topic with an error is left to the publish")
    func refusals() {
        let cluster = Cluster()
        let check = cluster.check()
        #expect(check.problem(topic: "replies", partition: 3) == nil)
        #expect(check.problem(topic: "replies", partition: nil) == nil)
        #expect(check.problem(topic: "replies", partition: 4)?.contains("not a partition of the reply topic (it has 4)") == true)
        #expect(check.problem(topic: "replies", partition: Int32.max) != nil)
        #expect(check.problem(topic: "forbidden", partition: 9) == nil, "listed with an error: the publish reports it")
        cluster.now.withLock { $0 += 1_000 }
        #expect(check.problem(topic: "nowhere", partition: 0)?.contains("does not exist in the cluster") == true)
    }

    @Test("unknown names cost at most one metadata request a second; known ones one a minute; a new topic is found on the next refresh")
    func lookupsAreBounded() {
        let cluster = Cluster()
        let check = cluster.check()
        for index in 0..<1_000 { _ = check.problem(topic: "made-up-\(index)", partition: 0) }
        #expect(cluster.lookups.withLock { $0 } == 1)
        for _ in 0..<1_000 { _ = check.problem(topic: "replies", partition: 0) }
        #expect(cluster.lookups.withLock { $0 } == 1)
        cluster.counts.withLock { $0?["new.replies"] = 2 }
        #expect(check.problem(topic: "new.replies", partition: 1) != nil, "within the second: not looked up again")
        cluster.now.withLock { $0 += 1_000 }
        #expect(check.problem(topic: "new.replies", partition: 1) == nil)
        #expect(cluster.lookups.withLock { $0 } == 2)
        cluster.now.withLock { $0 += 60_000 }
        _ = check.problem(topic: "replies", partition: 0)
        #expect(cluster.lookups.withLock { $0 } == 3, "known topics are refreshed after the TTL")
    }

    @Test("when metadata cannot be read, no topic is refused as missing")
    func unreadableMetadataRefusesNothing() {
        let cluster = Cluster()
        cluster.counts.withLock { $0 = nil }
        let check = cluster.check()
        #expect(check.problem(topic: "anything", partition: 7) == nil)
        // Read once, then unreadable: what was read still judges partitions, an unknown name passes.
        cluster.counts.withLock { $0 = ["replies": 4] }
        cluster.now.withLock { $0 += 60_000 }
        #expect(check.problem(topic: "replies", partition: 9) != nil)
        cluster.counts.withLock { $0 = nil }
        cluster.now.withLock { $0 += 1_000 }
        #expect(check.problem(topic: "created.since", partition: 0) == nil)
        #expect(check.problem(topic: "replies", partition: 9) != nil)
    }

    @Test("during a metadata request a known topic is judged at once by the cached counts; an unknown one waits for that request's answer and is judged by it")
    func lookupOutsideTheLock() throws {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let slow = Mutex(false)
        let lookups = Mutex(0)
        let now = Mutex<Int64>(1_000_000)
        let check = ReplyTopicCheck(clock: { now.withLock { $0 } }) {
            lookups.withLock { $0 += 1 }
            guard slow.withLock({ $0 }) else { return ["replies": 4] }
            entered.signal()
            release.wait()
            // `late.replies` created since the first request: unknown to the cache until this one answers.
            return ["replies": 4, "late.replies": 2]
        }
        #expect(check.problem(topic: "replies", partition: 1) == nil)
        slow.withLock { $0 = true }
        now.withLock { $0 += 1_000 }
        let answers = Mutex<[String: String?]>([:])
        let finished = DispatchGroup()
        DispatchQueue.global().async(group: finished) {
            let problem = check.problem(topic: "unknown-yet", partition: 0)
            answers.withLock { $0["unknown-yet"] = problem }
        }
        entered.wait()
        // The first caller is inside the metadata request: a known topic answers at once.
        let started = DispatchTime.now().uptimeNanoseconds
        #expect(check.problem(topic: "replies", partition: 9)?.contains("it has 4") == true)
        #expect(DispatchTime.now().uptimeNanoseconds - started < 1_000_000_000)
        // Two more callers with names the cache lacks, while the request is still under way.
        for topic in ["other-unknown", "late.replies"] {
            DispatchQueue.global().async(group: finished) {
                let problem = check.problem(topic: topic, partition: 5)
                answers.withLock { $0[topic] = problem }
            }
        }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(answers.withLock { $0.count } == 0, "no caller with an unknown name is answered before the request is")
        release.signal()
        finished.wait()
        let judged = answers.withLock { $0 }
        #expect(judged["unknown-yet"]??.contains("does not exist in the cluster") == true)
        #expect(judged["other-unknown"]??.contains("does not exist in the cluster") == true, "waited for the look-up, then refused")
        #expect(judged["late.replies"]??.contains("it has 2") == true, "listed by the look-up it waited for: judged by its count")
        #expect(lookups.withLock { $0 } == 2, "the callers that waited asked no metadata of their own")
    }
}

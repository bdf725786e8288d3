import Foundation
import Harness
import Kafka
import Observability
@testable import Pipeline
import Testing

/// The fetch watchdog's rule, with time passed in (no broker), and its restart end to end.
@Suite("Fetch watchdog: a stuck requests partition is restarted", .timeLimit(.minutes(5)))
struct FetchWatchdogTests {
    let partition = TopicPartition(topic: "requests", partition: 2)

    func sample(next: Int64 = 10, high: Int64 = 15, paused: Bool = false, flow: UInt64 = 1, generation: UInt64 = 1) -> FetchWatchdog.Sample {
        FetchWatchdog.Sample(generation: generation, nextOffset: next, highWatermark: high, paused: paused, flowVersion: flow)
    }

    @Test("records waiting and nothing received for the stall time: reported once, with the offset to seek to")
    func stuckPartitionIsReported() {
        var watchdog = FetchWatchdog(stallMs: 5_000)
        #expect(watchdog.observe([partition: sample()], nowMs: 0).isEmpty)
        #expect(watchdog.observe([partition: sample()], nowMs: 4_999).isEmpty, "reported before the stall time")
        let stalls = watchdog.observe([partition: sample(high: 18)], nowMs: 5_000)
        #expect(stalls == [FetchWatchdog.Stall(partition: partition, generation: 1, seekTo: 10, waiting: 5, stalledMs: 5_000)])
        #expect(watchdog.observe([partition: sample(high: 18)], nowMs: 9_999).isEmpty, "reported again before another stall time")
        #expect(watchdog.observe([partition: sample(high: 18)], nowMs: 10_000).map(\.remedy) == [.refetch],
                "still stuck at the same offset after a seek: reported again, to be refetched")
    }

    @Test("the first report at an offset asks for a seek; only a partition stuck again at the same offset in the same generation is refetched")
    func refetchOnlyWhenASeekDidNotHelp() {
        var watchdog = FetchWatchdog(stallMs: 5_000)
        _ = watchdog.observe([partition: sample()], nowMs: 0)
        #expect(watchdog.observe([partition: sample()], nowMs: 5_000).map(\.remedy) == [.seek])
        // The seek worked for a while: two records received, then stuck again.
        _ = watchdog.observe([partition: sample(next: 12, flow: 2)], nowMs: 10_000)
        #expect(watchdog.observe([partition: sample(next: 12, flow: 2)], nowMs: 15_000).map(\.remedy) == [.seek], "a new offset: a seek first")
        // The seek at 12 did nothing: the loop's restart raised the flow version; quiet again.
        _ = watchdog.observe([partition: sample(next: 12, flow: 3)], nowMs: 20_000)
        #expect(watchdog.observe([partition: sample(next: 12, flow: 3)], nowMs: 25_000).map(\.remedy) == [.refetch])
        // Assigned again (a new generation): whatever was tried before counts no more.
        _ = watchdog.observe([partition: sample(next: 12, flow: 4, generation: 2)], nowMs: 30_000)
        #expect(watchdog.observe([partition: sample(next: 12, flow: 4, generation: 2)], nowMs: 35_000).map(\.remedy) == [.seek])
    }

    @Test("a partition that received something, was paused, or changed owner is not stuck")
    func progressPauseAndGenerationResetTheQuietPeriod() {
        var watchdog = FetchWatchdog(stallMs: 5_000)
        _ = watchdog.observe([partition: sample()], nowMs: 0)
        #expect(watchdog.observe([partition: sample(next: 11)], nowMs: 5_000).isEmpty, "it received a record")
        #expect(watchdog.observe([partition: sample(next: 11, paused: true)], nowMs: 10_000).isEmpty, "paused now")
        #expect(watchdog.observe([partition: sample(next: 11)], nowMs: 15_000).isEmpty, "paused at the start of the period")
        #expect(watchdog.observe([partition: sample(next: 11, flow: 2)], nowMs: 20_000).isEmpty, "paused and resumed in between")
        #expect(watchdog.observe([partition: sample(next: 11, flow: 2, generation: 2)], nowMs: 25_000).isEmpty, "assigned again")
        #expect(watchdog.observe([partition: sample(next: 11, flow: 2, generation: 2)], nowMs: 30_000).count == 1,
                "quiet for a whole period since the last change: reported")
    }

    @Test("nothing waiting, or records arriving only later: the period starts when records wait")
    func nothingWaitingIsNotStuck() {
        var watchdog = FetchWatchdog(stallMs: 5_000)
        _ = watchdog.observe([partition: sample(high: 10)], nowMs: 0)
        #expect(watchdog.observe([partition: sample(high: 10)], nowMs: 5_000).isEmpty, "caught up")
        #expect(watchdog.observe([partition: sample(high: 12)], nowMs: 6_000).isEmpty, "records written after the last look")
        #expect(watchdog.observe([partition: sample(high: 12)], nowMs: 10_999).isEmpty)
        #expect(watchdog.observe([partition: sample(high: 12)], nowMs: 11_000).count == 1)
        // A partition no longer owned is forgotten: owned again, it starts afresh.
        _ = watchdog.observe([:], nowMs: 12_000)
        #expect(watchdog.observe([partition: sample(high: 12)], nowMs: 20_000).isEmpty)
    }

    @Test("end to end: a requests partition whose fetcher stops (paused behind the loop's back) is restarted and its requests answered")
    func stuckFetcherIsRestarted() throws {
        let rig = try PipelineRig(partitions: 2)
        defer { rig.stop() }
        let clock = SteppedClock()
        let worker = try rig.startWorker("worker-1", clock: { clock.now() })
        try rig.formGroupAndWarmUp()
        let stuck = TopicPartition(topic: rig.stack.topics.requests, partition: 1)
        worker.stallFetchingForTesting(stuck)
        var ids: [String] = []
        for index in 0..<6 {
            let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_stall_\(index)")
            try rig.send(request, partition: Int32(index % 2))
            ids.append(request.requestID)
        }
        let unstuck = ids.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        #expect(rig.waitForFinals(unstuck, timeoutMs: 30_000), "the partition left alone was not served: \(rig.missingFinals(unstuck))")
        // The lag measurement runs every 5 s and a partition counts as stuck after 5 s quiet, both
        // on the worker's clock: stepped on 5 s at a time (well inside the requests' 60 s window)
        // until the stall is counted, instead of waiting up to 15 s.
        let stalls = { rig.metrics(of: worker)?.total("provisioner_fetch_stalls_total") ?? 0 }
        for _ in 0..<4 where stalls() < 1 {
            clock.step(5_000)
            _ = PipelineRig.wait(timeoutMs: 1_000) { stalls() >= 1 }
        }
        #expect(rig.waitForFinals(ids, timeoutMs: 40_000), "the stuck partition's requests were never answered: \(rig.missingFinals(ids))")
        #expect(stalls() >= 1, "the restart was not counted")
        let restarts = rig.logs.records.filter { $0.message.hasPrefix("requests partition stopped delivering records") }
        #expect(restarts.contains { $0.fields.contains { $0.0 == "partition" && $0.1 == .integer(1) } },
                "no restart logged for partition 1: \(restarts.map(\.fields))")
        #expect(ids.allSatisfy { rig.collector.snapshot.results[$0]?.filter(\.result.isFinal).count == 1 }, "a request answered twice")
    }
}

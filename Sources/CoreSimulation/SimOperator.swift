import Kafka
import Pipeline
import Recovery

/// The operator of a run: replays dead letters with the tool's own checks and builder
/// (`DeadLetterReplayer`), all of them now and then, or each soon after it lands.
final class SimOperator: @unchecked Sendable {
    let world: SimWorld
    let cluster: SimCluster
    /// Letters replayed so far.
    private(set) var replayed = 0

    init(world: SimWorld, cluster: SimCluster) {
        self.world = world
        self.cluster = cluster
    }

    /// An operator who watches the dead letters: every second, each letter that landed since the
    /// last look is replayed 0.5-3 s later (`replay`'s checks and builder).
    func watch(seen: Int = 0) {
        world.after(1_000, nil, "operator looks at the dead letters") { [self] in
            let letters = cluster.records(SimulationRun.topics.deadLetters)
            for record in letters.dropFirst(seen) {
                world.after(world.int(500...3_000), nil, "operator replays a dead letter") { [self] in replay([record]) }
            }
            if world.nowMs < SimulationRun.epochMs + SimulationRun.endMs - 5_000 { watch(seen: letters.count) }
        }
    }

    /// What `dlq replay` does with `letters` (every dead letter written so far by default): a
    /// letter whose seal, target and replay policy allow it goes back to its original topic and
    /// partition, signed with the replay key (`DeadLetterReplayer.replayMessage`, the tool's own builder).
    func replay(_ letters: [KafkaMessage]? = nil) {
        let replayer = DeadLetterReplayer(properties: [:], auditTopic: SimulationRun.topics.audit, operatorName: "sim-operator",
                                          replayKeys: SimWorkload.replayKeys, targetTopics: [SimulationRun.topics.requests, SimulationRun.topics.reconcile])
        for record in letters ?? cluster.records(SimulationRun.topics.deadLetters) {
            let entry = DeadLetterEntry(message: record)
            guard replayer.refusal(entry, to: nil, nowMs: world.nowMs) == nil, let provenance = entry.provenance,
                  DeadLetterReplayPolicy.replayVerdict(provenance: provenance, summary: entry.summary, nowMs: world.nowMs).isReplayable else { continue }
            let message = DeadLetterReplayer.replayMessage(entry, provenance: provenance, to: provenance.originalTopic, operatorName: "sim-operator",
                                                           signer: SimWorkload.replayKeys.signer(nowMs: world.nowMs), partitionCount: 1, nowMs: world.nowMs)
            let offset = cluster.append(message, partition: message.partition ?? cluster.partition(for: message))
            replayed += 1
            world.note("operator replays \(entry.identifier) to \(provenance.originalTopic)@\(offset)")
        }
    }
}

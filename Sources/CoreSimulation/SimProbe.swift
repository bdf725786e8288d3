import Kafka
import Pipeline

/// What the simulation watches inside the core (`CoreProbe`): each assignment's catch-up, and each
/// record reaching intake, which must come after its own assignment's catch-up.
final class SimProbe: CoreProbe, @unchecked Sendable {
    var world: SimWorld?
    var cluster: SimCluster?
    /// Wakes a worker's consumer loops.
    var wake: ((String) -> Void)?
    private var caughtUp = Set<String>()
    private(set) var violations: [String] = []

    func caughtUp(worker: String, partition: TopicPartition, generation: UInt64) {
        world?.note("\(worker) caught up \(partition.partition) (generation \(generation))")
        // Its poll thread resumes the partition on its next turn: soon, as a real one polls every few ms.
        wake?(worker)
        caughtUp.insert("\(worker)/\(partition.partition)/\(generation)")
    }

    func intake(worker: String, partition: TopicPartition, offset: Int64, generation: UInt64) {
        world?.note("\(worker) intake \(partition.partition)@\(offset) (generation \(generation))")
        guard !caughtUp.contains("\(worker)/\(partition.partition)/\(generation)") else { return }
        let text = "\(worker) handled \(partition.partition)@\(offset) (generation \(generation)) before that assignment's catch-up"
        violations.append("t=\((world?.nowMs ?? 0) - SimulationRun.epochMs): \(text)")
        world?.note("VIOLATION \(text)")
    }
}

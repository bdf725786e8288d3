/// What one seeded schedule of the deterministic simulation found (`SimulationBatch`).
public struct SimulationReport: Sendable {
    /// The seed: `provisioner simulate --seed` replays it exactly.
    public let seed: UInt64
    /// What the seed drew (workers, partitions, protocol, drain, faults).
    public let settings: String
    /// The promises broken (empty: none).
    public let violations: [String]
    /// The event trace, when the run was traced.
    public let trace: [String]
    /// Events run.
    public let events: Int
    /// Requests sent (distinct ids).
    public let requests: Int
    /// Issuer provisioning calls made.
    public let calls: Int
    /// Requests with a final result.
    public let finals: Int
    /// Finals published again identically (a crash or hand-over republishes a decided final).
    public let identicalDuplicates: Int
    /// Requests dead-lettered.
    public let deadLetters: Int
    /// The paths the run took.
    public let coverage: SimulationCoverage
}

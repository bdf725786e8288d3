import Testing

/// The multi-worker scenarios on the operator's own Kafka cluster (`scripts/staging-check`, which
/// sets `PROVISIONER_STAGING_BOOTSTRAP` and the rest of `StagingCluster`): the acceptance mix,
/// scale 1 → 3 → 2 and kill -9 with calls in flight, each on prefixed topics it creates and
/// deletes, asserting what the mock-cluster runs assert and printing the same `RELIABILITY` lines.
/// Without `PROVISIONER_STAGING_BOOTSTRAP` the suite does not run.
@Suite("On the operator's staging cluster: demo mix, scale, kill -9", .serialized, .timeLimit(.minutes(15)),
       .enabled(if: StagingCluster.isConfigured, "PROVISIONER_STAGING_BOOTSTRAP names no cluster (scripts/staging-check sets it)"))
struct ReliabilityOnStagingTests {
    /// `ReliabilityOnNoidaTests.demoMix` on the staging cluster.
    @Test("acceptance mix through a worker process on the staging cluster, reconciliation included")
    func demoMix() async throws {
        try await ReliabilityOnNoidaTests.demoMix(on: .staging)
    }

    /// `ReliabilityTests.scaleWhileCalling` on the staging cluster.
    @Test("scale 1 → 3 → 2 with slow calls in flight on the staging cluster: every request final, no handshake twice")
    func scaleWhileCalling() async throws {
        try await ReliabilityTests.scaleWhileCalling(on: .staging)
    }

    /// `ReliabilityTests.killedWorkerMidCall` on the staging cluster.
    @Test("kill -9 of one of three workers mid-call on the staging cluster: every request answered, no handshake twice")
    func killedWorkerMidCall() async throws {
        try await ReliabilityTests.killedWorkerMidCall(on: .staging)
    }
}

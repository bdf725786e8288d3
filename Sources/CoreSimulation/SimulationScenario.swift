import Contract
import Pipeline

/// Pinned scenarios: fixed steps, not a seed's draws, that reproduce a defect a seeded schedule
/// once found, run on the simulation's real workers, cluster and issuer (`SimulationRun`) and
/// judged by the same promises. A random schedule that found a defect moves whenever the core
/// changes; a scenario keeps the fix tested. Each names the mutation that puts its fix back, and
/// must break a promise with it (`SimulationTests`). No fault is drawn: every issuer answers at
/// once, no produce fails, clocks agree; only the timing of the workers' own records still comes
/// from the fixed seed (milliseconds, never the steps).
public enum SimulationScenario: String, Sendable, CaseIterable {
    /// A renamed group's first owner must not be fenced out by the old group's last fence, sent
    /// through a slow broker before its writer exited and landing after the new owner's.
    case lateFenceAfterRename = "late-fence-after-rename"
    /// A renamed group's assignments must not go stale on the old group's fences of higher
    /// generations (generations count per group).
    case oldGenerationsAfterRename = "old-generations-after-rename"

    /// The fix each scenario keeps: with this mutation, the scenario breaks a promise.
    public var mutation: SimulationMutation {
        switch self {
        case .lateFenceAfterRename: .lateFenceAcrossGroups
        case .oldGenerationsAfterRename: .fencesAcrossGroups
        }
    }

    /// What happens, in words.
    public var summary: String {
        switch self {
        case .lateFenceAfterRename:
            "w1 hands the partition to w2 through a broker that acknowledges in 6 s; the group is renamed; w2's fence lands after the new owner's, which must still call"
        case .oldGenerationsAfterRename:
            "two joins and a leave take the old group to generation 4; after a rename the new group (generation 1) must run the partition"
        }
    }

    /// One step of a scenario, at a time after the run's start.
    enum Step {
        /// A Google Wallet request of program `sim-imprint` on card `card` (the issuer answers at once).
        case request(id: String, card: String)
        /// A worker starts in the current group.
        case join
        /// The worker named `worker` (`w1`, `w2`… in start order) is stopped with SIGTERM.
        case leave(worker: String)
        /// Produce acknowledgements take `takingMs` each until the renamed group starts.
        case slowUntilRenamed(takingMs: Int64)
        /// The documented rename: every worker stops, then as many start in `sim-renamed`.
        case rename
    }

    /// The cluster a scenario starts with and its steps (`atMs` after the run's start).
    struct Script {
        var workers: Int
        var partitions: Int32
        var steps: [(atMs: Int64, step: Step)]
    }

    var script: Script {
        switch self {
        case .lateFenceAfterRename:
            // w2's fence is sent at about 6 s and lands at about 12 s; the new group's owner fences
            // at about 10 s (more than the 1 s margin after it) and calls r1 and r2 after 14 s.
            Script(workers: 1, partitions: 1, steps: [
                (1_000, .request(id: "r0", card: "c0")), (3_000, .join), (5_900, .slowUntilRenamed(takingMs: 6_000)),
                (6_000, .leave(worker: "w1")), (9_000, .rename), (14_000, .request(id: "r1", card: "c1")), (14_500, .request(id: "r2", card: "c2")),
            ])
        case .oldGenerationsAfterRename:
            Script(workers: 1, partitions: 1, steps: [
                (1_000, .request(id: "r0", card: "c0")), (2_000, .join), (3_000, .join), (4_000, .leave(worker: "w1")),
                (7_000, .rename), (12_000, .request(id: "r1", card: "c1")),
            ])
        }
    }

    /// Runs the scenario (with `mutation`'s fix put back) and judges it.
    public func run(mutation: SimulationMutation? = nil, tracing: Bool = false) -> SimulationReport {
        SimulationRun(seed: 1, mutations: mutation?.coreMutations ?? CoreMutations(), tracing: tracing, script: script).run()
    }
}

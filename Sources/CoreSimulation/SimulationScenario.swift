import Contract
import Pipeline

/// Pinned scenarios: fixed steps, not a seed's draws, that reproduce a defect a seeded schedule
/// once found, run on the simulation's real workers, cluster and issuer (`SimulationRun`) and
/// judged by the same promises. A random schedule that found a defect moves whenever the core
/// changes; a scenario keeps the fix tested. Each names the mutation that puts its fix back, and
/// must break a promise with it (`SimulationTests`). No fault is drawn: every issuer answers at
/// once, clocks agree, and the only faults are the scenario's own steps; only the timing of the
/// workers' own records still comes from the fixed seed (milliseconds, never the steps).
public enum SimulationScenario: String, Sendable, CaseIterable {
    /// A renamed group's first owner must not be fenced out by the old group's last fence, sent
    /// through a slow broker before its writer exited and landing after the new owner's.
    case lateFenceAfterRename = "late-fence-after-rename"
    /// A renamed group's assignments must not go stale on the old group's fences of higher
    /// generations (generations count per group).
    case oldGenerationsAfterRename = "old-generations-after-rename"
    /// An answer made without a call whose partition was given up before it could be decided must
    /// not be published: the next owner, which finds the `started` marker whose write was reported
    /// failed, answers the request.
    case answerAfterGiveUp = "answer-after-give-up"
    /// An answer without a call counts for the duplicate horizon: a copy of the request produced
    /// again, reaching the next owner past the commit, is a duplicate, not a new request.
    case copyAfterAnswerWithoutCall = "copy-after-answer-without-call"

    /// The fix each scenario keeps: with this mutation, the scenario breaks a promise.
    public var mutation: SimulationMutation {
        switch self {
        case .lateFenceAfterRename: .lateFenceAcrossGroups
        case .oldGenerationsAfterRename: .fencesAcrossGroups
        case .answerAfterGiveUp: .answerAfterGiveUp
        case .copyAfterAnswerWithoutCall: .withoutCallOutOfHorizon
        }
    }

    /// What happens, in words.
    public var summary: String {
        switch self {
        case .lateFenceAfterRename:
            "w1 hands the partition to w2 through a broker that acknowledges in 6 s; the group is renamed; w2's fence lands after the new owner's, which must still call"
        case .oldGenerationsAfterRename:
            "two joins and a leave take the old group to generation 4; after a rename the new group (generation 1) must run the partition"
        case .copyAfterAnswerWithoutCall:
            "r1's started marker cannot be written, so w1 answers it failed without a call; w1 hands the partition to w2; a copy of r1 produced again must be ignored as answered"
        case .answerAfterGiveUp:
            "w1's started marker lands but every write is reported timed out; w2 joins and w1's revoke drain ends while its busy pool still holds the answer `failed`, which must not be published (w2 reconciles r1)"
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
        /// For `forMs`, every write to the markers topic fails, reported after `reportAfterMs`:
        /// `writesLand`, written all the same (a timeout), or not written.
        case markersOutage(forMs: Int64, writesLand: Bool, reportAfterMs: Int64)
        /// The request `id` produced again, the same message (a backend's retry).
        case requestAgain(id: String)
        /// The pool of `worker` runs nothing for `forMs` (its threads busy elsewhere).
        case stallPool(worker: String, forMs: Int64)
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
        case .copyAfterAnswerWithoutCall:
            // r1's three `started` marker writes fail by about 2.9 s: w1 answers it `failed` without
            // a call, decided once the markers are writable again (5 s), then its plain `completed`
            // marker. w1 leaves at 10 s; w2 takes the partition past the commit (its catch-up reads
            // the markers after the commit for the marker index, the whole horizon for the
            // duplicate horizon). The copy of r1 at 16 s must be ignored; with the fix put back it
            // is admitted and called: a second, different final. r0 and r2 are called.
            Script(workers: 1, partitions: 1, steps: [
                (500, .request(id: "r0", card: "c0")), (1_000, .markersOutage(forMs: 4_000, writesLand: false, reportAfterMs: 500)),
                (1_100, .request(id: "r1", card: "c1")), (9_000, .join), (10_000, .leave(worker: "w1")),
                (16_000, .requestAgain(id: "r1")), (18_000, .request(id: "r2", card: "c2")),
            ])
        case .answerAfterGiveUp:
            // r1 (partition 1, the one w2 takes) has its `started` marker written at about 1.1 s;
            // the third failure is reported at about 5.9 s, while w1 drains its revoke of
            // partition 1 (from about 2.6 s to 12.8 s); w1's pool, busy from 5 s to 33 s, makes the
            // answer (`failed`) after the drain ended. w2 found the marker and reconciles r1 (never
            // called) to `not_provisioned` at about 33 s: with the fix put back, w1's `failed` is a
            // second, different final. r0 and r2 (partition 0) are called by w1, r3 by w2.
            Script(workers: 1, partitions: 2, steps: [
                (500, .request(id: "r0", card: "c0")), (1_000, .markersOutage(forMs: 7_000, writesLand: true, reportAfterMs: 1_500)),
                (1_100, .request(id: "r1", card: "c1")), (2_500, .join), (5_000, .stallPool(worker: "w1", forMs: 28_000)),
                (34_000, .request(id: "r2", card: "c2")), (34_500, .request(id: "r3", card: "c3")),
            ])
        }
    }

    /// Runs the scenario (with `mutation`'s fix put back) and judges it.
    public func run(mutation: SimulationMutation? = nil, tracing: Bool = false) -> SimulationReport {
        SimulationRun(seed: 1, mutations: mutation?.coreMutations ?? CoreMutations(), tracing: tracing, script: script).run()
    }
}

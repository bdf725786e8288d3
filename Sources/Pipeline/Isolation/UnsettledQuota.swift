import Synchronization

/// Each program's cap on its requests that wait for or are in an issuer call on this worker
/// (`programs.<name>.max_unsettled`): a request of a program at its cap is answered at once
/// `failed`/`rate_limited` (transient: send it again later) instead of being held, so one
/// program's flood cannot fill the worker's `max_pending` and pause every partition, which the
/// other programs' requests share (docs/RELIABILITY.md, "Per-program quotas").
///
/// Taken when intake hands a job to the scheduler (`RequestFlow`), given back when its record
/// settles (`Settler`, by `RecordOrigin.quotaProgram`).
final class UnsettledQuota: Sendable {
    private let caps: [String: Int]
    private let held = Mutex<[String: Int]>([:])

    /// Caps per program name; a program without one is not limited.
    init(caps: [String: Int]) {
        self.caps = caps
    }

    /// Whether `program` has a cap.
    func limits(_ program: String) -> Bool { caps[program] != nil }

    /// Takes one of `program`'s places: false when it holds its cap already.
    func acquire(_ program: String) -> Bool {
        guard let cap = caps[program] else { return true }
        return held.withLock { held in
            let now = held[program, default: 0]
            guard now < cap else { return false }
            held[program] = now + 1
            return true
        }
    }

    /// Gives back one place `acquire` took for `program`.
    func release(_ program: String) {
        held.withLock { held in
            if let now = held[program], now > 0 { held[program] = now - 1 }
        }
    }

    /// Places `program` holds now (metrics, tests).
    func held(_ program: String) -> Int { held.withLock { $0[program, default: 0] } }
}

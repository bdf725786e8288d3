/// Arrival times of the simulator's calls (epoch ms), the newest `capacity` of them in a ring,
/// so a test can measure the rate the issuer saw over any window (`count(fromMs:toMs:)`).
struct CallTimes: Sendable {
    /// Times kept at most (8 bytes each): 500,000 calls, over 25 minutes at 300/s.
    static let capacity = 500_000

    private var times: [Int64] = []
    private var next = 0

    /// Records a call received at `atMs`.
    mutating func append(_ atMs: Int64) {
        if times.count < Self.capacity {
            times.append(atMs)
        } else {
            times[next] = atMs
            next = (next + 1) % Self.capacity
        }
    }

    /// Calls received in `[fromMs, toMs)` among those kept (a linear scan: times stamped on
    /// several threads may be out of order by a millisecond).
    func count(fromMs: Int64, toMs: Int64) -> Int {
        times.reduce(0) { $0 + ($1 >= fromMs && $1 < toMs ? 1 : 0) }
    }
}

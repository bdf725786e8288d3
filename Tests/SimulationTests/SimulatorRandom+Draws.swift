import Simulator

/// The simulation's draws, all from the run's one `SimulatorRandom` (SplitMix64 from the seed), in
/// order: a seed replays the same schedule exactly.
extension SimulatorRandom {
    /// A value in `range` (inclusive).
    mutating func int(_ range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &self) }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }

    /// One of `items` (not empty).
    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &self)] }
}

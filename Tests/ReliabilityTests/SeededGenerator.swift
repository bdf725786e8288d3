import Foundation
import Simulator

/// SplitMix64 (the simulator's generator): a repeatable random sequence, so a failing bad-input
/// run can be replayed with its seed.
typealias SeededGenerator = SimulatorRandom

extension SimulatorRandom {
    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }

    /// The seed from `PROVISIONER_RELIABILITY_SEED`, else `fallback`.
    static func seed(fallback: UInt64) -> UInt64 {
        ProcessInfo.processInfo.environment["PROVISIONER_RELIABILITY_SEED"].flatMap(UInt64.init) ?? fallback
    }
}

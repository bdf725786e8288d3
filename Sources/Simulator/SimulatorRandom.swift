import Contract
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SplitMix64: a small, fast generator for the load profile's draws (latency, error injection),
/// and the one the test suites replay seeds with (bad input, the deterministic simulation).
///
/// Seeded from the profile's `seed` for repeatable runs, or from OpenSSL's DRBG otherwise. Not for
/// secrets: keys, nonces and payload bytes come from `Crypto.randomBytes`.
public struct SimulatorRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// The sequence of `seed`, or an unpredictable one when nil.
    public init(seed: UInt64?) {
        if let seed {
            state = seed
        } else {
            state = Crypto.randomBytes(8).reduce(0) { $0 << 8 | UInt64($1) }
        }
    }

    /// The next value.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform double in [0, 1).
    mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// A standard normal draw (Box–Muller).
    mutating func gaussian() -> Double {
        let u1 = max(unit(), 0x1.0p-53)
        let u2 = unit()
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}

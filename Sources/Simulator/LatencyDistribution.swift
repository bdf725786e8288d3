#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How long the simulator waits before answering a card without a magic suffix.
///
/// JSON (`latency` in a load rule): `{"distribution":"fixed","ms":40}`,
/// `{"distribution":"uniform","min_ms":10,"max_ms":90}` or
/// `{"distribution":"lognormal","median_ms":40,"sigma":0.6,"max_ms":5000}` (`max_ms` optional).
public enum LatencyDistribution: Sendable, Hashable {
    /// Always the same delay.
    case fixed(milliseconds: Double)
    /// Uniform between the two bounds.
    case uniform(minimumMilliseconds: Double, maximumMilliseconds: Double)
    /// Log-normal: `median · e^(sigma·Z)`, capped at `maximumMilliseconds` when given.
    case logNormal(medianMilliseconds: Double, sigma: Double, maximumMilliseconds: Double?)

    /// No delay.
    public static let immediate = LatencyDistribution.fixed(milliseconds: 0)

    func sample(_ random: inout SimulatorRandom) -> Double {
        switch self {
        case .fixed(let milliseconds):
            return milliseconds
        case .uniform(let minimum, let maximum):
            return minimum + (maximum - minimum) * random.unit()
        case .logNormal(let median, let sigma, let maximum):
            let value = median * exp(sigma * random.gaussian())
            return maximum.map { min(value, $0) } ?? value
        }
    }
}

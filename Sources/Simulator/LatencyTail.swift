/// A slow tail added on top of a latency distribution: with `probability`, the answer takes
/// `milliseconds` instead of the distribution's draw.
///
/// JSON (`tail` in a load rule): `{"probability":0.01,"latency_ms":2500}`.
public struct LatencyTail: Sendable, Hashable {
    /// Share of answers in the tail, 0...1.
    public var probability: Double
    /// The tail latency.
    public var milliseconds: Double

    /// Creates a tail.
    public init(probability: Double, milliseconds: Double) {
        self.probability = probability
        self.milliseconds = milliseconds
    }
}

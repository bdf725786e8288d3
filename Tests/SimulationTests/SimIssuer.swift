import Simulator

/// A stateful issuer: the first call with a handshake is applied (its answer drawn from the
/// seed), a second use of the same single-use handshake is refused — a different answer, which
/// is why a second call must never happen — and its state query says what was applied.
final class SimIssuer {
    /// Calls per handshake.
    private(set) var calls: [String: Int] = [:]
    private var applied: [String: String] = [:]

    /// A call with `handshake`: the answer the caller gets.
    func call(_ handshake: String, random: inout SimulatorRandom) -> String {
        calls[handshake, default: 0] += 1
        if applied[handshake] != nil { return "rejected:already_used" }
        let answer = random.chance(0.8) ? "provisioned" : "declined"
        applied[handshake] = answer
        return answer
    }

    /// The state query: what the first call did, if any.
    func state(of handshake: String) -> String? { applied[handshake] }
}

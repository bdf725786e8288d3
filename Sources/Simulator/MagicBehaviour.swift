/// The behaviour a card id (or Worldpay transaction reference) selects by its suffix, like a card
/// network's test numbers (CONTRACT section 7).
enum MagicBehaviour: Equatable, Sendable {
    /// No suffix: an active card of the calling program; the load profile applies.
    case none
    /// `-missing`: the card does not exist.
    case missing
    /// `-foreign`: the card belongs to another program (answered as not found).
    case foreign
    /// `-inactive`: the card is frozen.
    case inactive
    /// `-provisioned`: the card is already in this wallet on this device.
    case provisioned
    /// `-slow-N`: answers after N milliseconds.
    case slow(milliseconds: Int)
    /// `-timeout-applied`: applies, then answers 504.
    case timeoutApplied
    /// `-timeout-unapplied`: answers 504 without applying.
    case timeoutUnapplied
    /// `-hang`: answers only after the profile's `hang_ms`.
    case hang
    /// `-flaky`: the first call answers 503 and changes nothing; later calls succeed.
    case flaky
    /// `-refused` (Worldpay references only): the payment is refused.
    case refused

    /// The longest `-slow-N` honoured (ten minutes).
    static let maximumSlowMilliseconds = 600_000

    /// Reads the suffix of `identifier`; `-refused` counts only when `allowsRefusal` (Worldpay).
    init(identifier: String, allowsRefusal: Bool = false) {
        if identifier.hasSuffix("-timeout-applied") {
            self = .timeoutApplied
        } else if identifier.hasSuffix("-timeout-unapplied") {
            self = .timeoutUnapplied
        } else if identifier.hasSuffix("-missing") {
            self = .missing
        } else if identifier.hasSuffix("-foreign") {
            self = .foreign
        } else if identifier.hasSuffix("-inactive") {
            self = .inactive
        } else if identifier.hasSuffix("-provisioned") {
            self = .provisioned
        } else if identifier.hasSuffix("-hang") {
            self = .hang
        } else if identifier.hasSuffix("-flaky") {
            self = .flaky
        } else if allowsRefusal, identifier.hasSuffix("-refused") {
            self = .refused
        } else if let milliseconds = Self.slowMilliseconds(identifier) {
            self = .slow(milliseconds: milliseconds)
        } else {
            self = .none
        }
    }

    private static func slowMilliseconds(_ identifier: String) -> Int? {
        let parts = identifier.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[parts.count - 2] == "slow" else { return nil }
        let digits = parts[parts.count - 1]
        guard !digits.isEmpty, digits.count <= 7, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits) else {
            return nil
        }
        return min(value, maximumSlowMilliseconds)
    }
}

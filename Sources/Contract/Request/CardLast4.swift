/// The last four digits of a card number: exactly four ASCII digits.
///
/// Safe to show in audit events and logs; the type guarantees nothing else can be stored in it.
public struct CardLast4: Sendable, Hashable, CustomStringConvertible {
    /// The four digits.
    public let digits: String

    /// Accepts exactly four ASCII digits.
    public init?(_ text: String) {
        let utf8 = text.utf8
        guard utf8.count == 4, utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        digits = text
    }

    /// The four digits.
    public var description: String { digits }
}

/// A keyed pseudonym (`card_ref`, `device_ref`): 32 lowercase hex characters from `Pseudonymizer`.
///
/// Lets operators correlate events about one card or device without seeing its identifier.
public struct Pseudonym: Sendable, Hashable, CustomStringConvertible {
    /// The hex text.
    public let hex: String

    /// Accepts exactly 32 lowercase hex characters (for reading events back).
    public init?(hex: String) {
        guard Pseudonym.isLowercaseHex(hex, length: 32) else { return nil }
        self.hex = hex
    }

    init(validated: String) {
        hex = validated
    }

    /// The hex text.
    public var description: String { hex }

    static func isLowercaseHex(_ text: String, length: Int) -> Bool {
        let utf8 = text.utf8
        return utf8.count == length && utf8.allSatisfy {
            ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f"))
        }
    }
}

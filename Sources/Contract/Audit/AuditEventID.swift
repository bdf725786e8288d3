/// An audit event id: 32 lowercase hex characters (128 random bits).
public struct AuditEventID: Sendable, Hashable, CustomStringConvertible {
    /// The hex text.
    public let hex: String

    /// A fresh random id.
    public static func random() -> AuditEventID {
        AuditEventID(validated: IdentifierRandomness.hex(16))
    }

    /// Accepts exactly 32 lowercase hex characters.
    public init?(hex: String) {
        guard Pseudonym.isLowercaseHex(hex, length: 32) else { return nil }
        self.hex = hex
    }

    private init(validated: String) {
        hex = validated
    }

    /// The hex text.
    public var description: String { hex }
}

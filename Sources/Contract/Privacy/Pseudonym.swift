/// A keyed pseudonym (`card_ref`, `device_ref`) from `Pseudonymizer`: 32 lowercase hex
/// characters, prefixed `<key id>:` when a named key made it (`k2:3f…`), so a reader knows which
/// key made it. During a key rotation it also carries `previous`, the same identifier's pseudonym
/// under the key before (`card_ref_previous`), so events before and after the rotation join.
///
/// Lets operators correlate events about one card or device without seeing its identifier.
public struct Pseudonym: Sendable, Hashable, CustomStringConvertible {
    /// The 32 hex characters.
    public let hex: String
    /// The id of the key that made it (nil: the unnamed key).
    public let keyID: String?
    /// The text of the same identifier's pseudonym under the previous key, during a rotation.
    public let previous: String?

    /// Accepts exactly 32 lowercase hex characters (an unnamed key's pseudonym).
    public init?(hex: String) {
        guard Pseudonym.isLowercaseHex(hex, length: 32) else { return nil }
        self.init(validated: hex, keyID: nil)
    }

    /// Accepts a pseudonym's text as written in an event: 32 lowercase hex characters, or
    /// `<key id>:` (1-16 of `[A-Za-z0-9._-]`) and 32 lowercase hex characters; `previous` (its
    /// twin under the previous key) must be one too.
    public init?(text: String, previous: String? = nil) {
        guard let (keyID, hex) = Self.parts(text) else { return nil }
        if let previous, Self.parts(previous) == nil { return nil }
        self.init(validated: hex, keyID: keyID, previous: previous)
    }

    init(validated: String, keyID: String?, previous: String? = nil) {
        hex = validated
        self.keyID = keyID
        self.previous = previous
    }

    /// The text written in events: `<key id>:<hex>`, or `<hex>` under the unnamed key.
    public var text: String { keyID.map { "\($0):\(hex)" } ?? hex }

    /// Every text this pseudonym is known by: its own and its previous key's.
    public var texts: [String] { [text] + (previous.map { [$0] } ?? []) }

    /// The text.
    public var description: String { text }

    /// Whether `text` has a pseudonym's shape.
    public static func isValid(_ text: String) -> Bool { parts(text) != nil }

    private static func parts(_ text: String) -> (keyID: String?, hex: String)? {
        guard let colon = text.utf8.firstIndex(of: UInt8(ascii: ":")) else {
            return isLowercaseHex(text, length: 32) ? (nil, text) : nil
        }
        let id = String(text[..<colon])
        let hex = String(text[text.index(after: colon)...])
        guard isKeyID(id), isLowercaseHex(hex, length: 32) else { return nil }
        return (id, hex)
    }

    /// Whether `id` may name a pseudonym key: 1-16 of `[A-Za-z0-9._-]`.
    private static func isKeyID(_ id: String) -> Bool {
        (1...16).contains(id.utf8.count) && id.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    static func isLowercaseHex(_ text: String, length: Int) -> Bool {
        let utf8 = text.utf8
        return utf8.count == length && utf8.allSatisfy {
            ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f"))
        }
    }
}

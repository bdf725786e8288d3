/// A secret string: certificates, nonces, signatures, wallet tokens, payload values, API keys and
/// raw card, user, wallet and device identifiers.
///
/// It prints, debug-prints, dumps and reflects as `<redacted>`, it is deliberately not `Encodable`,
/// and `revealed` is the only way to read the value, so every use of a secret is found by
/// `grep -n '\.revealed'`.
public struct Sensitive: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The text shown wherever a `Sensitive` is printed, interpolated, dumped or reflected.
    public static let placeholder = "<redacted>"

    private let value: String

    /// Wraps a secret.
    public init(_ value: String) {
        self.value = value
    }

    /// The secret itself. Pass it only to the issuer call, a hash, a pseudonym or the JWE.
    public var revealed: String { value }

    /// Whether the secret is the empty string.
    public var isEmpty: Bool { value.isEmpty }

    /// Whether the secret is empty or only whitespace.
    public var isBlank: Bool { value.allSatisfy(\.isWhitespace) }

    /// Always `<redacted>`.
    public var description: String { Sensitive.placeholder }

    /// Always `<redacted>`.
    public var debugDescription: String { Sensitive.placeholder }

    /// A mirror without children, so `dump` and reflection show nothing of the value.
    public var customMirror: Mirror {
        Mirror(self, children: [], displayStyle: nil)
    }
}

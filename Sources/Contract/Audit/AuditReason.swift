/// The short `reason` text of an audit event, built only from redaction-safe parts.
///
/// There is deliberately no initializer from a runtime `String`: a reason is a compile-time literal
/// (`StaticString`), a normalized code, a stage, or the message of our own failure types, whose
/// text names fields and counts but never values. So neither a `Sensitive` nor an issuer's free
/// text can reach the audit topic by accident.
public struct AuditReason: Sendable, Hashable, CustomStringConvertible {
    /// The text.
    public let text: String

    /// A reason written in the source code.
    public init(_ literal: StaticString) {
        text = literal.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    }

    /// The normalized code as reason.
    public init(_ code: ErrorCode) {
        text = code.rawValue
    }

    /// A rejection's code and message (field paths and counts only).
    public init(_ rejection: RequestRejection) {
        text = "\(rejection.code.rawValue): \(rejection.message)"
    }

    /// A validation failure's code and message (field paths and counts only).
    public init(_ failure: ValidationFailure) {
        text = "\(failure.code.rawValue): \(failure.message)"
    }

    /// A dead-letter cause's code and message (never quotes the message bytes).
    public init(_ cause: DeadLetterCause) {
        text = "\(cause.code.rawValue): \(cause.message)"
    }

    /// An outcome's code and our table text (never the issuer's free text).
    public init(_ outcome: Outcome) {
        text = (outcome.code.map { "\($0.rawValue): " } ?? "") + outcome.message
    }

    /// A dead-letter cause code alone.
    public init(_ code: DeadLetterCause.Code) {
        text = code.rawValue
    }

    /// A transport failure kind.
    public init(_ failure: TransportFailure) {
        text = failure.rawValue
    }

    init(decoded: String) {
        text = decoded
    }

    /// Two reasons joined by `; `.
    public static func + (lhs: AuditReason, rhs: AuditReason) -> AuditReason {
        AuditReason(decoded: lhs.text + "; " + rhs.text)
    }

    /// The text.
    public var description: String { text }
}

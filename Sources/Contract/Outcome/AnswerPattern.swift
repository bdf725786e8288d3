/// Which issuer answers an `OutcomeRow` covers.
public enum AnswerPattern: Sendable, Hashable, CustomStringConvertible {
    /// A provisioning success with a valid payload.
    case success
    /// A Worldpay outcome; `nil` matches any outcome.
    case payment(outcome: String?)
    /// An error with this HTTP status and, unless `nil`, this issuer code.
    case http(status: Int, issuerCode: String?)
    /// An error with this issuer code, whatever the HTTP status (DCS envelope codes).
    case issuerCode(String)
    /// An error whose HTTP status is in this hundred (4 → 4xx, 5 → 5xx).
    case httpClass(Int)
    /// Any error answer.
    case anyIssuerError
    /// A transport failure.
    case transport(TransportFailure)
    /// A success status with an unusable body.
    case invalidSuccessResponse
    /// Anything (the table's last row).
    case anything

    /// Whether `answer` falls under this pattern.
    public func matches(_ answer: IssuerAnswer) -> Bool {
        switch (self, answer) {
        case (.anything, _): true
        case (.success, .success): true
        case (.payment(let expected), .payment(let result)): expected == nil || expected == result.outcome
        case (.http(let status, let code), .issuerError(let httpStatus, let issuerCode, _)):
            status == httpStatus && (code == nil || code == issuerCode)
        case (.issuerCode(let code), .issuerError(_, let issuerCode, _)): code == issuerCode
        case (.httpClass(let hundred), .issuerError(let httpStatus, _, _)): httpStatus / 100 == hundred
        case (.anyIssuerError, .issuerError): true
        case (.transport(let expected), .transportFailure(let failure)): expected == failure
        case (.invalidSuccessResponse, .invalidSuccessResponse): true
        default: false
        }
    }

    /// A short human description for tables.
    public var description: String {
        switch self {
        case .success: "success"
        case .payment(let outcome): outcome.map { "outcome \($0)" } ?? "any other outcome"
        case .http(let status, let code): code.map { "HTTP \(status) \($0)" } ?? "HTTP \(status)"
        case .issuerCode(let code): "code \(code)"
        case .httpClass(let hundred): "any \(hundred)xx"
        case .anyIssuerError: "any other error"
        case .transport(let failure): "transport \(failure.rawValue)"
        case .invalidSuccessResponse: "invalid success response"
        case .anything: "anything else"
        }
    }
}

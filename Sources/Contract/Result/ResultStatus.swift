/// The status of a result (CONTRACT section 4; payment statuses for section 8).
public enum ResultStatus: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The payload is ready for the wallet (or reconciliation found the token).
    case provisioned
    /// The card is already in this wallet on this device: success in the UI.
    case alreadyProvisioned = "already_provisioned"
    /// The input or the issuer said no; `code` says why.
    case rejected
    /// Could not be done before the deadline; the issuer was not called or the call was abandoned before sending.
    case expired
    /// Unknown whether the issuer applied it (504, timeout after sending); not final, reconciliation follows.
    case indeterminate
    /// Reconciliation found it was not applied (final).
    case notProvisioned = "not_provisioned"
    /// Transient failure, gave up.
    case failed
    /// The payment was authorized.
    case authorized
    /// The payment was refused.
    case refused
    /// The payment was (partially) settled.
    case settled
    /// The payment authorization was cancelled.
    case cancelled

    /// The wire name.
    public var description: String { rawValue }
}

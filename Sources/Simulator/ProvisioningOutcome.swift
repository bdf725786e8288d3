/// What the simulator decided for a provisioning call; each issuer renders it in its own wire format.
enum ProvisioningOutcome: Equatable, Sendable {
    /// Applied: build and send the payload.
    case success
    /// `-missing` or `-foreign`.
    case cardNotFound
    /// `-inactive`.
    case cardNotActive
    /// `-provisioned`, or the same card, wallet and device again.
    case alreadyProvisioned
    /// The device or wallet id ends in `-ineligible`.
    case deviceIneligible
    /// The Apple nonce was used before.
    case nonceUsed
    /// 503, nothing applied (`-flaky` first call, profile).
    case unavailable
    /// 429 with `Retry-After` (profile).
    case rateLimited(retryAfterSeconds: Int)
    /// 504 (`-timeout-applied` after applying, `-timeout-unapplied`, profile).
    case gatewayTimeout
    /// No answer until the profile's `hang_ms` (then 504).
    case hang
}

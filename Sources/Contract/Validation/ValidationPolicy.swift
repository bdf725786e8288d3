/// Configuration knobs of `RequestValidator`.
public struct ValidationPolicy: Sendable, Hashable {
    /// Whether provisioning requests must carry `reply.jwk` (config `results.require_encryption`, default true).
    public var requireEncryption: Bool

    /// Creates a policy.
    public init(requireEncryption: Bool = true) {
        self.requireEncryption = requireEncryption
    }
}

import Contract

/// A request made by `RequestFactory`, with the keys a test or the demo needs to check its result.
public struct GeneratedRequest: Sendable {
    /// `request_id`.
    public var requestID: String
    /// `program`.
    public var program: String
    /// `kind`.
    public var kind: RequestKind
    /// `wallet`.
    public var wallet: Wallet
    /// The Kafka key (the card id, or nil to leave it unkeyed).
    public var key: [UInt8]?
    /// The message value (JSON, or whatever a bad-input case needs).
    public var value: [UInt8]
    /// The private half of `reply.jwk`: decrypts the result's payload.
    public var replyKey: ReplyPrivateKey?
    /// The Apple leaf private key: decrypts the issuer's `encrypted_pass_data`.
    public var appleLeafKey: ECPrivateKey?
    /// SHA-256 hex of the Apple nonce or the Google ids, as the simulator reports calls.
    public var handshake: String?

    /// Its identity (program, request id): what its answers name.
    public var identity: RequestIdentity { RequestIdentity(program: program, requestID: requestID) }
}

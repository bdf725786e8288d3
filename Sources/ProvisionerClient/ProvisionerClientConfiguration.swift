import Contract

/// How a `ProvisionerClient` reaches the worker and where it takes its answers.
public struct ProvisionerClientConfiguration: Sendable {
    /// librdkafka properties for the client's producer and reply reader (`bootstrap.servers`, security).
    public var kafka: [String: String]
    /// The requests topic (`provisioning.requests`).
    public var requestsTopic: String
    /// The reply topic; the worker must allow it (`results.reply_topics`).
    public var replyTopic: String
    /// The partition of `replyTopic` this client owns: one per client instance, assigned by hand
    /// (no consumer group, so no rebalance can take it away).
    public var replyPartition: Int32
    /// The backend's private key: its public half goes in every request's `reply.jwk`, and it
    /// decrypts the payloads. P-256 by default; an X25519 key (`ReplyPrivateKey.generate(.x25519)`)
    /// makes the worker encrypt with X25519, which costs it less per result.
    public var replyKey: ReplyPrivateKey
    /// The program's request signing secret, when the program signs (`request_signing`): requests are
    /// signed v3, each written to the partition murmur2 of its card id picks (`RequestPartitioner`).
    public var signingSecret: Sensitive?
    /// The id of that secret among the program's keys (`request_signing.keys[].id`), sent as
    /// `x-request-key-id` and covered by the signature; nil for the program's unnamed key. During a
    /// key rotation, sign with the new key's secret and id once every worker accepts it.
    public var signingKeyID: String?
    /// How long an answer is awaited, from the handshake; nil: the contract window of the wallet
    /// (Apple Pay 20 s, Google wallets 60 s).
    public var answerWindowMs: Int64?
    /// How long the broker may hold a fetch of the reply partition (`fetch.wait.max.ms`): the
    /// most an answer can wait at the broker before the client sees it.
    public var replyFetchWaitMs = 10

    /// Creates a configuration with a P-256 reply key.
    public init(kafka: [String: String], requestsTopic: String = "provisioning.requests", replyTopic: String, replyPartition: Int32,
                replyKey: ECPrivateKey, signingSecret: Sensitive? = nil, answerWindowMs: Int64? = nil) {
        self.init(kafka: kafka, requestsTopic: requestsTopic, replyTopic: replyTopic, replyPartition: replyPartition,
                  replyKey: .p256(replyKey), signingSecret: signingSecret, answerWindowMs: answerWindowMs)
    }

    /// Creates a configuration with a reply key on either curve.
    public init(kafka: [String: String], requestsTopic: String = "provisioning.requests", replyTopic: String, replyPartition: Int32,
                replyKey: ReplyPrivateKey, signingSecret: Sensitive? = nil, answerWindowMs: Int64? = nil) {
        self.kafka = kafka
        self.requestsTopic = requestsTopic
        self.replyTopic = replyTopic
        self.replyPartition = replyPartition
        self.replyKey = replyKey
        self.signingSecret = signingSecret
        self.answerWindowMs = answerWindowMs
    }

    /// The answer window for `wallet` when none is configured (CONTRACT: Apple Pay 20 s, Google 60 s).
    func windowMs(for wallet: Wallet) -> Int64 {
        answerWindowMs ?? (wallet == .applePay ? 20_000 : 60_000)
    }
}

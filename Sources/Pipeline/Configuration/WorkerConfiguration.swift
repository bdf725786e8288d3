import Contract
import Observability

/// Everything a worker needs, read from a JSON file with `PROVISIONER_…` environment overrides.
/// See docs/CONFIGURATION.md for every key.
public struct WorkerConfiguration: Sendable {
    /// librdkafka properties for every client, passed through verbatim.
    public var kafka: [String: String] = ["bootstrap.servers": "127.0.0.1:9092"]
    /// librdkafka properties whose values are secrets, by environment variable name
    /// (`kafka_secret_env`: `{"sasl.password": "KAFKA_SASL_PASSWORD"}`); resolved into `kafka` at load.
    public var kafkaSecretVariables: [String: String] = [:]
    /// librdkafka properties whose values are secrets, by file path (`kafka_secret_file`:
    /// `{"sasl.password": "/run/secrets/kafka/password"}`); read into `kafka` at load.
    public var kafkaSecretFiles: [String: String] = [:]
    /// Extra librdkafka properties for the consumers only.
    public var kafkaConsumer: [String: String] = [:]
    /// Extra librdkafka properties for the producer only.
    public var kafkaProducer: [String: String] = [:]
    /// Consumer group of the workers.
    public var groupID = "provisioner"
    /// Name of this worker in audit events and dead letters (default host-pid).
    public var workerID: String
    /// Topic names.
    public var topics = TopicNames()
    /// Programs by name.
    public var programs: [String: ProgramConfiguration] = [:]
    /// Reject requests without `reply.jwk` (payload encryption is mandatory).
    public var requireEncryption = true
    /// `results.reply_topics`: topics a request may name in `kafka_replyTopic` (an entry ending in
    /// `*` is a prefix). Empty: reply routing to any topic but the default results topic is refused.
    public var replyTopics: [String] = []
    /// `results.mirror_replies`: also publish a copy of every routed result to the default results topic.
    public var mirrorReplies = false
    /// `audit.pseudonym_key_env` / `pseudonym_key_file`: the HMAC key for `card_ref` / `device_ref`
    /// pseudonyms (the unnamed key; nil when only `audit.pseudonym_keys` are configured).
    public var pseudonymKey: SecretSource? = SecretSource.environment("PROVISIONER_AUDIT_KEY")
    /// `audit.pseudonym_keys`: named pseudonym keys, oldest first; the newest not retired makes
    /// pseudonyms (`<id>:<hex>`), the one before it their `…_previous` twins (`PseudonymKeys`).
    public var pseudonymKeys: [RequestSigningKey] = []
    /// `host:port` of `/healthz`, `/readyz` and `/metrics`; nil disables the endpoint.
    public var httpListen: String? = "127.0.0.1:9464"
    /// CA bundle for issuer TLS (nil: the system bundle).
    public var caBundlePath: String?
    /// Deadline windows and margins.
    public var deadlines = DeadlinePolicy()
    /// Time kept back from every issuer call to build and publish the result before publish-by.
    public var publishReserveMs: Int64 = 200
    /// Scheduling limits, bulkheads, breakers and rate limits.
    public var scheduler = SchedulerSettings()
    /// Messages held in the worker (queued + in flight) before the partitions are paused.
    public var maxPending = 4_096

    /// Requests of `program` that may wait for or be in an issuer call on this worker at once
    /// (`programs.<name>.max_unsettled`); a further one is answered `failed`/`rate_limited` at once.
    /// Unset: half of `max_pending` for a program that does not sign its requests while another
    /// program does (a keyless producer's flood leaves the rest of the worker to the signed
    /// programs), else `max_pending`.
    public func maxUnsettled(for program: ProgramConfiguration) -> Int {
        if let limit = program.maxUnsettled { return limit }
        let someoneSigns = programs.values.contains(where: \.signsRequests)
        return someoneSigns && !program.signsRequests ? max(1, maxPending / 2) : maxPending
    }
    /// Reconciliation delays, one per attempt.
    public var reconcileTiersMs: [Int64] = [2_000, 10_000, 60_000, 300_000]
    /// `reconcile.apply_horizon_ms`: how long after a call was given up an issuer may still apply
    /// it. Before then, a state query that finds no trace of the call proves nothing: the job asks
    /// again at its next tier (or, out of tiers, answers `check_wallet`), never `not_provisioned`.
    public var reconcileApplyHorizonMs: Int64 = 5_000
    /// `reconcile.max_held_per_partition`: jobs one reconcile partition may hold waiting for their
    /// tier before it is paused (resumed below half); never more are held.
    public var reconcileMaxHeldPerPartition = 1_000
    /// Single-use nonce memory.
    public var nonceHorizonMs: Int64 = 15 * 60 * 1000
    /// `duplicates.horizon_seconds`: how long an answered request id is recognised as a
    /// duplicate, on any worker that owns its partition, across restarts and rebalances (from the
    /// markers topic, whose retention must cover it).
    public var duplicateHorizonMs: Int64 = 24 * 60 * 60 * 1000
    /// `duplicates.max_bytes`: the one budget for the answered ids the duplicate horizon holds, of
    /// owned and released partitions alike, shared out among the programs by
    /// `programs.<name>.duplicate_share` (about 28 bytes an id; a share's oldest go first, counted).
    public var duplicateIndexMaxBytes = 256 << 20
    /// Bound on draining in-flight work at shutdown.
    public var shutdownDrainMs: Int64 = 20_000
    /// How long a synchronous offset commit (on a revoke, at a stop) waits for the group
    /// coordinator before it is given up (not a configuration key). A stop's commits together get
    /// at most this much past the drain bound: a stop commits and leaves within
    /// `shutdownDrainMs + forcedCommitTimeoutMs`.
    public var forcedCommitTimeoutMs: Int64 = 5_000
    /// How long the worker keeps running, readiness failed, after a consumer error that retrying
    /// does not heal was reported, before it stops to exit non-zero (not a configuration key).
    public var consumerFailureExitMs: Int64 = 30_000
    /// Bound on finishing in-flight work of revoked partitions: at least `revokeDrainFloorMs`
    /// (raised to it at loading).
    public var revokeDrainMs: Int64 = 5_000

    /// The shortest revoke drain that lets every call in flight end and be decided: the longest
    /// program timeout plus the publish reserve.
    public var revokeDrainFloorMs: Int64 {
        (programs.values.map(\.timeoutMs).max() ?? 0) + publishReserveMs
    }
    /// Attempts to publish a result before it is dead-lettered.
    public var publishAttempts = 5
    /// `dlq.replay_signing_secret_env` / `replay_signing_secret_file`: the key `dlq replay` signs
    /// replays with, and workers accept replays of signed programs by (nil: such replays are
    /// refused `unauthenticated`, unless `replayKeys` names keys). The unnamed replay key.
    public var replaySigningSecret: SecretSource?
    /// `dlq.replay_keys`: named replay keys, oldest first, each accepted until its `not_after`;
    /// the newest not retired seals dead letters and signs replays.
    public var replayKeys: [RequestSigningKey] = []
    /// `secrets.reload_interval_ms`: how often file secrets are checked for a change.
    public var secretReloadIntervalMs: Int64 = 2_000
    /// Minimum log level.
    public var logLevel: LogLevel = .info
    /// `tracing.*`: span export over OTLP/HTTP; nil (no `tracing.otlp_endpoint`) exports none.
    public var tracing: TracingSettings?

    /// Where spans go and how many: `tracing.otlp_endpoint`, `sample_ratio`, `max_queue`.
    public struct TracingSettings: Sendable, Equatable {
        /// The collector's base URL (`http://` or `https://`); spans are posted to `<endpoint>/v1/traces`.
        public var endpoint: String
        /// The share of traces recorded (0...1), decided by trace id.
        public var sampleRatio = 1.0
        /// Spans waiting for export at most; beyond them spans are dropped and counted.
        public var maxQueue = 10_000

        /// Settings exporting every sampled trace to `endpoint`.
        public init(endpoint: String) {
            self.endpoint = endpoint
        }
    }

    /// Creates the defaults (no programs).
    public init(workerID: String) {
        self.workerID = workerID
    }

    /// The program named `name`, if configured.
    public func program(_ name: String) -> ProgramConfiguration? { programs[name] }

    /// librdkafka properties for a consumer in the worker group.
    public var consumerProperties: [String: String] {
        var properties = kafka.merging(kafkaConsumer) { _, specific in specific }
        properties["group.id"] = properties["group.id"] ?? groupID
        return properties
    }

    /// The consumer group the requests consumer joins (`group.id` of the consumer properties).
    public var consumerGroup: String { consumerProperties["group.id"] ?? groupID }

    /// librdkafka properties for the producer.
    public var producerProperties: [String: String] {
        kafka.merging(kafkaProducer) { _, specific in specific }
    }

    /// Every secret the configuration names, with the key that names it (secrets are only ever
    /// named, never stored): the audit keys, the replay keys, Kafka's, then each program's.
    public var secrets: [SecretReference] {
        var references = pseudonymKeyList.map { SecretReference(keyPath: $0.keyPath, source: $0.secret) }
        references += replayKeyList.map { SecretReference(keyPath: $0.keyPath, source: $0.secret) }
        for (property, variable) in kafkaSecretVariables.sorted(by: { $0.key < $1.key }) {
            references.append(SecretReference(keyPath: "kafka_secret_env.\(property)", source: .environment(variable)))
        }
        for (property, path) in kafkaSecretFiles.sorted(by: { $0.key < $1.key }) {
            references.append(SecretReference(keyPath: "kafka_secret_file.\(property)", source: .file(path)))
        }
        for (name, program) in programs.sorted(by: { $0.key < $1.key }) {
            references.append(SecretReference(keyPath: "programs.\(name).api_key" + program.apiKey.keySuffix, source: program.apiKey))
            if let secret = program.apiSecret {
                references.append(SecretReference(keyPath: "programs.\(name).api_secret" + secret.keySuffix, source: secret))
            }
            for key in program.signingKeys { references.append(SecretReference(keyPath: key.keyPath, source: key.secret)) }
        }
        return references
    }

    /// The environment variables among `secrets`.
    public var secretEnvironmentVariables: [(keyPath: String, variable: String)] {
        secrets.compactMap { reference in reference.source.variable.map { (reference.keyPath, $0) } }
    }

    /// The files among `secrets`.
    public var secretFiles: [(keyPath: String, path: String)] {
        secrets.compactMap { reference in reference.source.path.map { (reference.keyPath, $0) } }
    }
}

import Contract
import Observability
import Recovery

/// What the console's pages need: Kafka access, topic names, the worker group, the console's
/// settings, the replay keys, the operator log and the metrics monitor.
public struct ConsoleContext: Sendable {
    /// librdkafka properties (bootstrap servers, security) for the console's own clients.
    public var kafka: [String: String]
    /// The pipeline's topic names.
    public var topics: TopicNames
    /// The workers' consumer group (read, never joined).
    public var groupID: String
    /// The `console` section.
    public var configuration: ConsoleConfiguration
    /// The replay keys (`dlq.replay_signing_secret_env`, `dlq.replay_keys`): check dead letters'
    /// `dlq.mac` and sign replays with the current key, like `dlq replay`.
    public var replayKeys: ReplayKeyring?
    /// The console's own log: logins, refusals, who replayed what.
    public var logger: Logger
    /// The `/metrics` scraper.
    public var monitor: MetricsMonitor

    /// Creates a context.
    public init(kafka: [String: String], topics: TopicNames, groupID: String, configuration: ConsoleConfiguration,
                replayKeys: ReplayKeyring?, logger: Logger, monitor: MetricsMonitor) {
        self.kafka = kafka
        self.topics = topics
        self.groupID = groupID
        self.configuration = configuration
        self.replayKeys = replayKeys
        self.logger = logger
        self.monitor = monitor
    }
}

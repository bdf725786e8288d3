/// A Kafka protocol request type (`ApiKey`), for injecting errors into the mock cluster.
public struct KafkaAPIKey: Hashable, Sendable, CustomStringConvertible {
    /// The protocol's ApiKey number.
    public var rawValue: Int16

    /// Wraps an ApiKey number.
    public init(rawValue: Int16) { self.rawValue = rawValue }

    /// Produce (0).
    public static let produce = KafkaAPIKey(rawValue: 0)
    /// Fetch (1).
    public static let fetch = KafkaAPIKey(rawValue: 1)
    /// ListOffsets (2).
    public static let listOffsets = KafkaAPIKey(rawValue: 2)
    /// Metadata (3).
    public static let metadata = KafkaAPIKey(rawValue: 3)
    /// OffsetCommit (8).
    public static let offsetCommit = KafkaAPIKey(rawValue: 8)
    /// OffsetFetch (9).
    public static let offsetFetch = KafkaAPIKey(rawValue: 9)
    /// FindCoordinator (10).
    public static let findCoordinator = KafkaAPIKey(rawValue: 10)
    /// JoinGroup (11).
    public static let joinGroup = KafkaAPIKey(rawValue: 11)
    /// Heartbeat (12).
    public static let heartbeat = KafkaAPIKey(rawValue: 12)
    /// LeaveGroup (13).
    public static let leaveGroup = KafkaAPIKey(rawValue: 13)
    /// SyncGroup (14).
    public static let syncGroup = KafkaAPIKey(rawValue: 14)
    /// ApiVersions (18).
    public static let apiVersions = KafkaAPIKey(rawValue: 18)
    /// CreateTopics (19).
    public static let createTopics = KafkaAPIKey(rawValue: 19)
    /// InitProducerId (22).
    public static let initProducerID = KafkaAPIKey(rawValue: 22)
    /// AddPartitionsToTxn (24).
    public static let addPartitionsToTransaction = KafkaAPIKey(rawValue: 24)
    /// EndTxn (26).
    public static let endTransaction = KafkaAPIKey(rawValue: 26)
    /// DescribeConfigs (32).
    public static let describeConfigs = KafkaAPIKey(rawValue: 32)
    /// AlterConfigs (33).
    public static let alterConfigs = KafkaAPIKey(rawValue: 33)

    /// `ApiKey N`.
    public var description: String { "ApiKey \(rawValue)" }
}

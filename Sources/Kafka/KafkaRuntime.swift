import CRdKafka

/// The librdkafka library loaded at run time, which may be newer than the headers the binary was
/// built against (the dynamic linker picks it: `LD_LIBRARY_PATH`, rpath), and the defaults that
/// depend on it.
public enum KafkaRuntime {
    /// The loaded library's version as it reports it (`rd_kafka_version_str()`, e.g. `2.0.2`).
    public static let version: String = String(cString: rd_kafka_version_str())

    /// The loaded library's release (`rd_kafka_version()`).
    public static let release = KafkaRuntimeVersion(packed: Int(rd_kafka_version()))

    /// The release of the headers this binary was compiled against (`RD_KAFKA_VERSION`).
    public static let builtAgainst = KafkaRuntimeVersion(packed: Int(RD_KAFKA_VERSION))

    /// The eager assignor used below `cooperativeFrom`: every rebalance revokes every partition
    /// before the member joins, so no asynchronous commit is outstanding during the join.
    public static let eagerAssignor = "roundrobin"

    /// The incremental assignor used from `cooperativeFrom`: a rebalance moves only the partitions
    /// that change owner.
    public static let cooperativeAssignor = "cooperative-sticky"

    /// The first release whose cooperative rebalances keep their assignment under load: before it,
    /// an asynchronous commit answered `ILLEGAL_GENERATION` while the member waits in JoinGroup
    /// makes it lose its whole assignment and rejoin, round after round (confluentinc/librdkafka#4059).
    public static let cooperativeFrom = KafkaRuntimeVersion(major: 2, minor: 10, revision: 0)

    /// The default `partition.assignment.strategy` of the worker's groups for `release`:
    /// `roundrobin` below 2.10.0, `cooperative-sticky` from 2.10.0.
    public static func defaultAssignor(for release: KafkaRuntimeVersion) -> String {
        release < cooperativeFrom ? eagerAssignor : cooperativeAssignor
    }

    /// The default `partition.assignment.strategy` for the loaded library (a configured one wins:
    /// `KafkaConsumerRole.committingMember` applies this only when none is set).
    public static var defaultAssignor: String { defaultAssignor(for: release) }

    /// The strategy a group member built from `properties` uses: the configured
    /// `partition.assignment.strategy`, else `defaultAssignor`.
    public static func assignor(configured properties: [String: String]) -> String {
        properties["partition.assignment.strategy"] ?? defaultAssignor
    }
}

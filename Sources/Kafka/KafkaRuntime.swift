import CRdKafka

/// The librdkafka library loaded at run time, which may be newer than the headers the binary was
/// built against (the dynamic linker picks it: `LD_LIBRARY_PATH`, rpath), and what depends on it.
public enum KafkaRuntime {
    /// The loaded library's version as it reports it (`rd_kafka_version_str()`, e.g. `2.0.2`).
    public static let version: String = String(cString: rd_kafka_version_str())

    /// The loaded library's release (`rd_kafka_version()`).
    public static let release = KafkaRuntimeVersion(packed: Int(rd_kafka_version()))

    /// The release of the headers this binary was compiled against (`RD_KAFKA_VERSION`).
    public static let builtAgainst = KafkaRuntimeVersion(packed: Int(RD_KAFKA_VERSION))

    /// The default `partition.assignment.strategy` of the worker's groups, on every runtime: a
    /// rebalance moves only the partitions that change owner, and a revoke can drain its calls in
    /// flight (up to the longest program timeout) while the member keeps its other partitions and
    /// its generation. With the eager `roundrobin`, every rebalance revokes every partition, and
    /// on librdkafka 2.0.2 against the mock cluster the commit after such a drain was refused
    /// (`REBALANCE_IN_PROGRESS`, `ILLEGAL_GENERATION`): every answered offset came back to the next
    /// owner (50 of 150 requests answered twice, identically, in `scaleWhileCalling`). Below
    /// 2.10.0, cooperative rebalances can lose an assignment under load when an asynchronous
    /// commit is answered `ILLEGAL_GENERATION` during JoinGroup (confluentinc/librdkafka#4059):
    /// run librdkafka 2.10 or later in production (docs/CONFIGURATION.md). A configured strategy
    /// wins (`KafkaConsumerRole.committingMember` applies this only when none is set).
    public static let defaultAssignor = "cooperative-sticky"

    /// The first release whose cooperative rebalances keep their assignment under load
    /// (confluentinc/librdkafka#4059): below it, `provisioner worker` logs a warning at start.
    public static let cooperativeFixedIn = KafkaRuntimeVersion(major: 2, minor: 10, revision: 0)

    /// Whether the loaded library has confluentinc/librdkafka#4059 (cooperative rebalances that
    /// can lose an assignment under load).
    public static var hasCooperativeRebalanceDefect: Bool { release < cooperativeFixedIn }

    /// The first release that can destroy a `cooperative-sticky` member before its first assignment
    /// (confluentinc/librdkafka#4312, fixed by #4381): below it, `KafkaConsumer.close` waits for
    /// that assignment first.
    public static let stickyDestroyFixedIn = KafkaRuntimeVersion(major: 2, minor: 3, revision: 0)

    /// Whether the loaded library aborts when a `cooperative-sticky` member is destroyed between
    /// its JoinGroup and its first assignment (confluentinc/librdkafka#4312).
    public static var hasStickyDestroyDefect: Bool { release < stickyDestroyFixedIn }

    /// The first release that sets up the queue an unsecured OAUTHBEARER token's refresh goes to
    /// (`enable.sasl.oauthbearer.unsecure.jwt`). Below it the builtin unsecured refresher returns
    /// from its setup before that queue is assigned, so the first refresh (10 s after a token
    /// could not be made, or at 80 % of a token's lifetime) locks a null queue on librdkafka's main
    /// thread and the process dies of SIGSEGV (the setup was reordered in 2.2.0, by #4301).
    public static let unsecuredTokenRefreshFixedIn = KafkaRuntimeVersion(major: 2, minor: 2, revision: 0)

    /// Why `properties` cannot be used with the librdkafka `release`, or nil when they can: a
    /// client that would crash the process later is refused when it is created
    /// (`KafkaConfiguration.make`).
    public static func refusal(of properties: [String: String], on release: KafkaRuntimeVersion) -> String? {
        let unsecuredToken = properties["enable.sasl.oauthbearer.unsecure.jwt"].map { ["true", "t", "1"].contains($0.lowercased()) } ?? false
        guard unsecuredToken, release < unsecuredTokenRefreshFixedIn else { return nil }
        return "enable.sasl.oauthbearer.unsecure.jwt needs librdkafka \(unsecuredTokenRefreshFixedIn) or later: the loaded "
            + "\(release) crashes the process at its first token refresh (its refresh queue is never set up); "
            + "load a newer librdkafka or use sasl.oauthbearer.method=oidc"
    }

    /// The strategy a group member built from `properties` uses: the configured
    /// `partition.assignment.strategy`, else `defaultAssignor`.
    public static func assignor(configured properties: [String: String]) -> String {
        properties["partition.assignment.strategy"] ?? defaultAssignor
    }
}

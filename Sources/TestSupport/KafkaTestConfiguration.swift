/// librdkafka properties tuned for tests against the mock cluster.
///
/// The mock answers every Fetch only after the full `fetch.wait.max.ms` (a real broker answers as
/// soon as data arrives), so test consumers use 10 ms; producers send at once.
///
/// Group timings of librdkafka 2.0.2's mock coordinator: the first join of an empty group completes
/// after 3 s; any later join or leave completes after `session.timeout.ms` - 1 s; and a member that
/// waits in a join longer than `session.timeout.ms` is expelled. So 4.5 s: joins complete, and a
/// rebalance after a member leaves takes 3.5 s.
public enum KafkaTestConfiguration {
    /// A producer: `linger.ms=0`, short message timeout.
    public static func producer(bootstrapServers: String, _ overrides: [String: String] = [:]) -> [String: String] {
        [
            "bootstrap.servers": bootstrapServers,
            "linger.ms": "0",
            "message.timeout.ms": "10000",
            "socket.connection.setup.timeout.ms": "3000",
        ].merging(overrides) { _, new in new }
    }

    /// A group consumer reading from the earliest offset, with fast fetches and short group timings.
    public static func consumer(bootstrapServers: String, group: String, _ overrides: [String: String] = [:]) -> [String: String] {
        [
            "bootstrap.servers": bootstrapServers,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": "10",
            "fetch.error.backoff.ms": "10",
            "session.timeout.ms": "4500",
            "heartbeat.interval.ms": "100",
            "topic.metadata.refresh.interval.ms": "1000",
            "socket.connection.setup.timeout.ms": "3000",
        ].merging(overrides) { _, new in new }
    }
}

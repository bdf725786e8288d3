/// librdkafka properties tuned for tests against the mock cluster.
///
/// The mock answers every Fetch only after the full `fetch.wait.max.ms` (a real broker answers as
/// soon as data arrives), so test consumers use 10 ms; producers send at once; group timings are
/// short so rebalances finish in about a second.
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
            "session.timeout.ms": "2000",
            "heartbeat.interval.ms": "100",
            "topic.metadata.refresh.interval.ms": "1000",
            "socket.connection.setup.timeout.ms": "3000",
        ].merging(overrides) { _, new in new }
    }
}

/// The consumer settings this project sets itself, whatever the configuration says, by what the
/// consumer is for: one place for the commit, offset-store and reset keys (before, each consumer
/// set them by hand).
public enum KafkaConsumerRole: Sendable {
    /// A group member that commits by hand what it finished (the worker's requests and
    /// reconciliation loops): no auto-commit, no automatic offset store, from the earliest offset
    /// when the group has none (unless configured), with `assignmentStrategy` unless configured.
    case committingMember(groupID: String, assignmentStrategy: String? = nil)
    /// A reader that assigns partitions itself and never commits (marker catch-up, fencing, the
    /// dead-letter tool): in its own group `groupID`, always from the earliest offset it asks for.
    case reader(groupID: String)
    /// A `reader` of whole topics for an operator (the dead-letter tool, the console), whose
    /// buffers are bounded unless configured: `prefetchKiB` queued ahead of the reader and
    /// `fetchBytes` per fetch (a larger record still arrives whole), so reading a topic of
    /// megabyte records costs tens of megabytes, not librdkafka's defaults (64 MiB queued plus
    /// 50 MB fetches).
    case operatorReader(groupID: String)

    /// What an `operatorReader` queues ahead (KiB).
    public static let prefetchKiB = "16384"
    /// What an `operatorReader` asks for in one fetch (bytes).
    public static let fetchBytes = "4194304"

    /// `properties` with this role's settings applied.
    public func applied(to properties: [String: String]) -> [String: String] {
        var properties = properties
        properties["enable.auto.commit"] = "false"
        switch self {
        case .committingMember(let groupID, let assignmentStrategy):
            properties["group.id"] = groupID
            properties["enable.auto.offset.store"] = "false"
            if properties["auto.offset.reset"] == nil { properties["auto.offset.reset"] = "earliest" }
            if let assignmentStrategy, properties["partition.assignment.strategy"] == nil {
                properties["partition.assignment.strategy"] = assignmentStrategy
            }
        case .reader(let groupID):
            properties["group.id"] = groupID
            properties["auto.offset.reset"] = "earliest"
        case .operatorReader(let groupID):
            properties = Self.reader(groupID: groupID).applied(to: properties)
            properties["enable.auto.offset.store"] = "false"
            if properties["queued.max.messages.kbytes"] == nil { properties["queued.max.messages.kbytes"] = Self.prefetchKiB }
            // librdkafka refuses a `fetch.max.bytes` below `message.max.bytes`.
            if properties["fetch.max.bytes"] == nil {
                let floor = properties["message.max.bytes"].flatMap(Int.init) ?? 0
                properties["fetch.max.bytes"] = floor > Int(Self.fetchBytes)! ? String(floor) : Self.fetchBytes
            }
        }
        return properties
    }
}

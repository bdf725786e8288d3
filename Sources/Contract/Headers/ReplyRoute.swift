/// Where a request's results go, from Spring Kafka's request-reply headers (CONTRACT section 11):
/// `kafka_replyTopic` (UTF-8 topic name), `kafka_replyPartition` (4-byte big-endian int) and
/// `kafka_correlationId` (opaque bytes, at most 256), echoed on every result for the request.
///
/// Contract knows no Kafka: headers are read through a lookup by name that returns the last
/// header of that name (`.some(nil)` for a null header, `nil` when absent).
public struct ReplyRoute: Sendable, Hashable {
    /// The header naming the reply topic.
    public static let topicHeader = "kafka_replyTopic"
    /// The header naming the reply partition (4 bytes, big-endian).
    public static let partitionHeader = "kafka_replyPartition"
    /// The header carrying the correlation id, echoed on every result.
    public static let correlationHeader = "kafka_correlationId"
    /// The three headers, in the order they are written.
    public static let headerNames = [topicHeader, partitionHeader, correlationHeader]
    /// Longest correlation id accepted, in bytes.
    public static let maximumCorrelationBytes = 256

    /// The reply topic; nil: the default results topic (a correlation id alone is still echoed).
    public var topic: String?
    /// The reply partition; nil: the partition the key (`request_id`) hashes to.
    public var partition: Int32?
    /// The correlation id, echoed unchanged.
    public var correlationID: [UInt8]?

    /// Creates a route.
    public init(topic: String?, partition: Int32? = nil, correlationID: [UInt8]? = nil) {
        self.topic = topic
        self.partition = partition
        self.correlationID = correlationID
    }

    /// Why a message's reply headers are refused (never quotes their values).
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, in one line.
        public var reason: String
        /// Creates a problem.
        public init(_ reason: String) { self.reason = reason }
        public var description: String { reason }
    }

    /// Reads the reply headers: nil when the message has none, a problem when one is malformed
    /// (topic not a UTF-8 Kafka topic name, partition not 4 bytes or negative, correlation id over
    /// `maximumCorrelationBytes`, a null header, or a partition without a topic).
    public static func read(_ header: (String) -> [UInt8]??) -> Result<ReplyRoute?, Problem> {
        let topicBytes = header(topicHeader)
        let partitionBytes = header(partitionHeader)
        let correlationBytes = header(correlationHeader)
        if topicBytes == nil && partitionBytes == nil && correlationBytes == nil { return .success(nil) }
        var route = ReplyRoute(topic: nil)
        if let topicBytes {
            guard let bytes = topicBytes, let text = String(validating: bytes, as: UTF8.self), RecordBounds.isTopicName(text) else {
                return .failure(Problem("the \(topicHeader) header is not a Kafka topic name (UTF-8, 1-249 of [A-Za-z0-9._-])"))
            }
            route.topic = text
        }
        if let partitionBytes {
            guard let bytes = partitionBytes, bytes.count == 4 else {
                return .failure(Problem("the \(partitionHeader) header must be 4 bytes (a big-endian 32-bit integer)"))
            }
            let value = Int32(bitPattern: UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3]))
            guard value >= 0 else { return .failure(Problem("the \(partitionHeader) header is a negative partition")) }
            guard route.topic != nil else {
                return .failure(Problem("the \(partitionHeader) header needs a \(topicHeader) header"))
            }
            route.partition = value
        }
        if let correlationBytes {
            guard let bytes = correlationBytes, bytes.count <= maximumCorrelationBytes else {
                return .failure(Problem("the \(correlationHeader) header must be at most \(maximumCorrelationBytes) bytes"))
            }
            route.correlationID = bytes
        }
        return .success(route)
    }

    /// The 4 big-endian bytes of a partition number, as `kafka_replyPartition` carries it.
    public static func partitionBytes(_ partition: Int32) -> [UInt8] {
        let value = UInt32(bitPattern: partition)
        return [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
                UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    /// The route as request headers (name, value), in `headerNames` order.
    public var requestHeaders: [(name: String, value: [UInt8])] {
        var headers: [(name: String, value: [UInt8])] = []
        if let topic { headers.append((Self.topicHeader, Array(topic.utf8))) }
        if let partition { headers.append((Self.partitionHeader, Self.partitionBytes(partition))) }
        if let correlationID { headers.append((Self.correlationHeader, correlationID)) }
        return headers
    }

    /// The route as a JSON object (`topic`, `partition`, `correlation_id` in base64) for records
    /// the worker writes and reads back (reconciliation jobs).
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("topic"); writer.string(orNull: topic)
        writer.key("partition"); writer.integer(orNull: partition.map(Int64.init))
        writer.key("correlation_id"); writer.string(orNull: correlationID.map(Crypto.base64Encode))
        writer.endObject()
    }

    /// Reads the JSON form `write(to:)` produces, with the same bounds as the headers.
    public static func read(json value: JSONValue) -> Result<ReplyRoute, Problem> {
        guard value.objectValue != nil else { return .failure(Problem("reply is not an object")) }
        var route = ReplyRoute(topic: nil)
        if let topic = value["topic"], !topic.isNull {
            guard let text = topic.stringValue, RecordBounds.isTopicName(text) else { return .failure(Problem("reply.topic is not a topic name")) }
            route.topic = text
        }
        if let partition = value["partition"], !partition.isNull {
            guard let number = partition.int64Value, RecordBounds.partitions.contains(number), route.topic != nil else {
                return .failure(Problem("reply.partition is not a partition of reply.topic"))
            }
            route.partition = Int32(number)
        }
        if let correlation = value["correlation_id"], !correlation.isNull {
            guard let text = correlation.stringValue, text.utf8.count <= 400, let bytes = Crypto.base64Decode(text),
                  bytes.count <= maximumCorrelationBytes else {
                return .failure(Problem("reply.correlation_id is not base64 of at most \(maximumCorrelationBytes) bytes"))
            }
            route.correlationID = bytes
        }
        return .success(route)
    }
}

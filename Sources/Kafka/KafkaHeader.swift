/// One Kafka record header: a name and an optional (possibly empty) byte value.
public struct KafkaHeader: Sendable, Hashable {
    /// The header name (`traceparent`, `x-replay-of`).
    public var key: String
    /// The value; `nil` is a null header, distinct from an empty value.
    public var value: [UInt8]?

    /// Creates a header with a byte value.
    public init(key: String, value: [UInt8]?) {
        self.key = key
        self.value = value
    }

    /// Creates a header whose value is the UTF-8 bytes of `value`.
    public init(key: String, string value: String) {
        self.key = key
        self.value = Array(value.utf8)
    }

    /// The value decoded as UTF-8, or `nil` for a null header or bytes that are not UTF-8.
    public var stringValue: String? {
        guard let value else { return nil }
        return String(validating: value, as: UTF8.self)
    }
}

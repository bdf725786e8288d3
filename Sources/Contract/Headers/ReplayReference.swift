/// The value of an `x-replay-of` header: the dead letter a message replays, `topic:partition:offset`
/// (a legal Kafka topic name, then two non-negative decimal integers), at most 256 bytes.
public struct ReplayReference: Sendable, Hashable, CustomStringConvertible {
    /// Longest accepted header value, in bytes.
    public static let maximumBytes = 256

    /// The dead-letter topic.
    public var topic: String
    /// Its partition.
    public var partition: Int32
    /// The offset there.
    public var offset: Int64

    /// Creates a reference.
    public init(topic: String, partition: Int32, offset: Int64) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
    }

    /// Parses a header value; nil unless it is exactly `topic:partition:offset` within bounds.
    public init?(_ text: String) {
        guard text.utf8.count <= Self.maximumBytes else { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, RecordBounds.isTopicName(parts[0]),
              let partition = Self.decimal(parts[1]), partition <= Int64(Int32.max),
              let offset = Self.decimal(parts[2])
        else { return nil }
        self.init(topic: String(parts[0]), partition: Int32(partition), offset: offset)
    }

    /// Parses header bytes (UTF-8).
    public init?(bytes: [UInt8]) {
        // Every accepted byte is ASCII, so a plain decoding is exact for any value that parses.
        guard bytes.count <= Self.maximumBytes, bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        self.init(String(decoding: bytes, as: UTF8.self))
    }

    /// `topic:partition:offset`.
    public var description: String { "\(topic):\(partition):\(offset)" }

    /// A non-negative decimal integer of 1-19 plain digits (no sign, no spaces) that fits Int64.
    private static func decimal(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int64(text)
    }
}

extension Int64 {
    /// `self + other`, saturating at `Int64.min` / `Int64.max` instead of trapping.
    public func clampedAdding(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }

    /// `self - other`, saturating at `Int64.min` / `Int64.max` instead of trapping.
    public func clampedSubtracting(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        guard overflow else { return difference }
        return other > 0 ? .min : .max
    }
}

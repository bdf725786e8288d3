/// Bounds for the fields of records the worker writes and reads back from its own topics
/// (reconciliation jobs, call markers, dead letters and their headers).
///
/// Those topics are internal, but a record read back is still input: a damaged, hand-written or
/// forged one must be refused (and dead-lettered with a reason), never allowed to overflow an
/// addition or a conversion later and trap the worker that owns its partition.
public enum RecordBounds {
    /// The latest timestamp accepted: 3000-01-01T00:00:00Z in epoch milliseconds.
    public static let latestTimestampMs: Int64 = 32_503_680_000_000
    /// Timestamps accepted in records: from the epoch to the year 3000, in milliseconds.
    public static let timestampsMs: ClosedRange<Int64> = 0...latestTimestampMs
    /// Partitions accepted in records.
    public static let partitions: ClosedRange<Int64> = 0...Int64(Int32.max)
    /// Reconciliation (and processing) attempts accepted in records.
    public static let maximumAttempt = 1_000
    /// Longest free-text field accepted (reasons, worker names, consumer groups), in bytes.
    public static let maximumTextBytes = 1_024

    /// Whether `value` is a timestamp within `timestampsMs`.
    public static func isTimestamp(_ value: Int64) -> Bool { timestampsMs.contains(value) }

    /// Whether `value` is a Kafka offset (not negative).
    public static func isOffset(_ value: Int64) -> Bool { value >= 0 }

    /// Whether `value` is an attempt number within 1...`maximumAttempt`.
    public static func isAttempt(_ value: Int64) -> Bool { (1...Int64(maximumAttempt)).contains(value) }

    /// A `request_id` or program name: 1-64 of `[A-Za-z0-9._:-]` (as the request decoder accepts).
    public static func isToken(_ text: String, maxLength: Int = 64) -> Bool { Identifier.isToken(text, maxLength: maxLength) }

    /// A card id as the request decoder accepts it.
    public static func isCardID(_ text: String) -> Bool { Identifier.isCardID(text) }

    /// A Worldpay transaction reference as the request validator accepts it.
    public static func isTransactionReference(_ text: String) -> Bool { Identifier.isTransactionReference(text) }

    /// W3C trace context as the worker propagates it: 1-128 of hex digits and `-`.
    public static func isTraceparent(_ text: String) -> Bool {
        let utf8 = text.utf8
        return !utf8.isEmpty && utf8.count <= 128 && text.allSatisfy { $0.isHexDigit || $0 == "-" }
    }

    /// Free text: at most `maxBytes` bytes, no control characters.
    public static func isText(_ text: String, maxBytes: Int = maximumTextBytes) -> Bool {
        text.utf8.count <= maxBytes && Identifier.hasNoControlCharacters(text)
    }

    /// A legal Kafka topic name: 1-249 of `[A-Za-z0-9._-]`, not `.` or `..`.
    public static func isTopicName(_ text: some StringProtocol) -> Bool {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= 249, text != ".", text != ".." else { return false }
        return utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }
}

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

    /// `self * other`, saturating at `Int64.min` / `Int64.max` instead of trapping.
    public func clampedMultiplying(by other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        guard overflow else { return product }
        return (self < 0) == (other < 0) ? .max : .min
    }
}

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
    /// Largest encoded result a decision marker may carry (`CallMarker.result`), in bytes: well
    /// above any result the worker writes (a sealed payload is a few KiB), below Kafka's default
    /// 1 MiB record limit once base64-encoded.
    public static let maxResultBytes = 256 * 1_024

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

/// Request authenticity (CONTRACT "Request signing"): a program's backend signs each request
/// message with a shared secret in the `x-request-signature` header.
///
/// - `v3=<hex>` (current): HMAC-SHA256 over `RequestSignature.signingInput(.v3, …)`: a version
///   tag, the record key, the producer timestamp header `x-request-timestamp` (epoch ms, decimal),
///   every header that changes how the request is handled or where it may be taken
///   (`Version.coveredHeaders`: first `x-request-partition`, the partition the producer wrote the
///   record to, and `x-request-key-id`, which key signed), and the value; accepted only within a freshness window around the worker's clock
///   and only on the partition it names, so a byte copy on another partition is not authentic.
/// - `v2=<hex>`: the same without the partition; accepted only where a program enables it.
/// - `v1=<hex>` (legacy): HMAC-SHA256 over the value alone; accepted only where a program enables it.
///
/// Contract knows no Kafka: headers are given as a lookup by name (the last header of that name),
/// each found `Header` absent, null (present without a value) or bytes.
public enum RequestSignature {
    /// A header as a message carries it: the last header of its name.
    public enum Header: Sendable, Hashable {
        /// No header of that name.
        case absent
        /// Present without a value (Kafka allows a null header value): signed as its own value,
        /// never as absent (CONTRACT section 12), and malformed wherever a header is read.
        case null
        /// Present with these bytes.
        case bytes([UInt8])

        /// The header from a lookup that returns nil when absent and `.some(nil)` when null.
        public init(_ found: [UInt8]??) {
            switch found {
            case .none: self = .absent
            case .some(.none): self = .null
            case .some(.some(let bytes)): self = .bytes(bytes)
            }
        }

        /// Its bytes, when it has a value.
        public var value: [UInt8]? {
            if case .bytes(let bytes) = self { bytes } else { nil }
        }
    }

    /// The Kafka header carrying the signature.
    public static let header = "x-request-signature"
    /// The producer timestamp header (epoch milliseconds, ASCII decimal) covered by v2 and v3.
    public static let timestampHeader = "x-request-timestamp"
    /// The partition the producer wrote the record to (ASCII decimal), covered by v3.
    public static let partitionHeader = "x-request-partition"
    /// Which of the program's keys signed (an operator-chosen id), covered by v3; absent when the
    /// program's one unnamed key (`request_signing.secret_env`) signed.
    public static let keyIDHeader = "x-request-key-id"
    /// The headers v2 covers, in signing order: each decides where an answer goes or how the
    /// request is handled (a replay, who replayed it, reply routing).
    public static let routingHeaders = ["x-replay-of", "x-replay-operator", "kafka_replyTopic", "kafka_replyPartition", "kafka_correlationId"]
    /// Default freshness window: ± 5 minutes.
    public static let defaultMaxSkewMs: Int64 = 300_000

    /// The keyed signature schemes (v1, value only, is apart: `signV1`).
    public enum Version: String, Sendable, CaseIterable {
        /// Key, timestamp, routing headers and value.
        case v2
        /// v2, the partition the record was written to (`x-request-partition`) and the signing
        /// key's id (`x-request-key-id`).
        case v3

        /// The label that starts the signing input.
        public var tag: String { "provisioner-request-signature-\(rawValue)" }
        /// The headers covered, in signing order.
        public var coveredHeaders: [String] {
            switch self {
            case .v2: RequestSignature.routingHeaders
            case .v3: [RequestSignature.partitionHeader, RequestSignature.keyIDHeader] + RequestSignature.routingHeaders
            }
        }
    }

    /// Which signature schemes a verifier accepts and how fresh a v2 or v3 signature must be.
    public struct Policy: Sendable, Equatable {
        /// Largest difference between `x-request-timestamp` and the verifier's clock, either way.
        public var maxSkewMs: Int64
        /// Whether the legacy `v1=` scheme (value only, no freshness) is accepted.
        public var acceptsV1: Bool
        /// Whether `v2=` (no partition: a copy on another partition verifies) is accepted.
        public var acceptsV2: Bool

        /// Creates a policy (v3 only, ± 5 minutes, unless told otherwise).
        public init(maxSkewMs: Int64 = RequestSignature.defaultMaxSkewMs, acceptsV1: Bool = false, acceptsV2: Bool = false) {
            self.maxSkewMs = maxSkewMs
            self.acceptsV1 = acceptsV1
            self.acceptsV2 = acceptsV2
        }
    }

    /// The legacy v1 header value: `v1=` and the hex HMAC-SHA256 of `value`.
    public static func signV1(secret: Sensitive, value: [UInt8]) -> String {
        "v1=" + Crypto.hex(Crypto.hmacSHA256(key: Array(secret.revealed.utf8), data: value))
    }

    /// The `version` header value for a message with `key`, `timestampMs` (also sent as
    /// `x-request-timestamp`), the covered headers found by `header` (for v3 they include
    /// `x-request-partition`, which the caller sends too), and `value`.
    public static func sign(_ version: Version, secret: Sensitive, key: [UInt8]?, timestampMs: Int64, value: [UInt8],
                            header: (String) -> Header) -> String {
        let input = signingInput(version, key: key, timestamp: Array(String(timestampMs).utf8), value: value, header: header)
        return version.rawValue + "=" + Crypto.hex(Crypto.hmacSHA256(key: Array(secret.revealed.utf8), data: input))
    }

    /// The exact bytes `version` signs: `field(tag) field(key) field(timestamp)`, then
    /// `field(name) field(header value)` for each covered header in order, then `field(value)`.
    /// `field(x)` is x's length as a 4-byte big-endian integer followed by x; an absent key or
    /// header is the 4 bytes `FF FF FF FF` alone and a null header `FF FF FF FE` alone, so
    /// "absent", "null" and "empty" never sign alike.
    public static func signingInput(_ version: Version, key: [UInt8]?, timestamp: [UInt8]?, value: [UInt8],
                                    header: (String) -> Header) -> [UInt8] {
        var input = LengthPrefixedFields(capacity: value.count + 200)
        input.append(version.tag)
        input.append(key)
        input.append(timestamp)
        for name in version.coveredHeaders {
            input.append(name)
            switch header(name) {
            case .absent: input.append(nil as [UInt8]?)
            case .null: input.appendNull()
            case .bytes(let bytes): input.append(bytes)
            }
        }
        input.append(value)
        return input.bytes
    }
}

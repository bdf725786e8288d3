/// Request authenticity (CONTRACT section 11): a program's backend signs each request message with
/// a shared secret in the `x-request-signature` header.
///
/// - `v2=<hex>` (current): HMAC-SHA256 over `RequestSignature.signingInput`: a version tag, the
///   record key, the producer timestamp header `x-request-timestamp` (epoch ms, decimal), every
///   header that changes how the request is handled (`coveredHeaders`), and the value; accepted only
///   within a freshness window around the worker's clock.
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
    /// The producer timestamp header (epoch milliseconds, ASCII decimal) covered by v2.
    public static let timestampHeader = "x-request-timestamp"
    /// The tag that starts v2's signing input; a future v3 changes it.
    public static let versionTag = "provisioner-request-signature-v2"
    /// The headers v2 covers, in signing order: each decides where an answer goes or how the
    /// request is handled (a replay, who replayed it, reply routing).
    public static let coveredHeaders = ["x-replay-of", "x-replay-operator", "kafka_replyTopic", "kafka_replyPartition", "kafka_correlationId"]
    /// Default freshness window: ± 5 minutes.
    public static let defaultMaxSkewMs: Int64 = 300_000

    /// Which signature schemes a verifier accepts and how fresh a v2 signature must be.
    public struct Policy: Sendable, Equatable {
        /// Largest difference between `x-request-timestamp` and the verifier's clock, either way.
        public var maxSkewMs: Int64
        /// Whether the legacy `v1=` scheme (value only, no freshness) is accepted.
        public var acceptsV1: Bool

        /// Creates a policy (v2 only, ± 5 minutes, unless told otherwise).
        public init(maxSkewMs: Int64 = RequestSignature.defaultMaxSkewMs, acceptsV1: Bool = false) {
            self.maxSkewMs = maxSkewMs
            self.acceptsV1 = acceptsV1
        }
    }

    /// The legacy v1 header value: `v1=` and the hex HMAC-SHA256 of `value`.
    public static func signV1(secret: Sensitive, value: [UInt8]) -> String {
        "v1=" + Crypto.hex(Crypto.hmacSHA256(key: Array(secret.revealed.utf8), data: value))
    }

    /// The v2 header value for a message with `key`, `timestampMs` (also sent as
    /// `x-request-timestamp`), the covered headers found by `header`, and `value`.
    public static func signV2(secret: Sensitive, key: [UInt8]?, timestampMs: Int64, value: [UInt8],
                              header: (String) -> Header) -> String {
        let input = signingInput(key: key, timestamp: Array(String(timestampMs).utf8), value: value, header: header)
        return "v2=" + Crypto.hex(Crypto.hmacSHA256(key: Array(secret.revealed.utf8), data: input))
    }

    /// The exact bytes v2 signs: `field(versionTag) field(key) field(timestamp)`, then
    /// `field(name) field(header value)` for each covered header in order, then `field(value)`.
    /// `field(x)` is x's length as a 4-byte big-endian integer followed by x; an absent key or
    /// header is the 4 bytes `FF FF FF FF` alone and a null header `FF FF FF FE` alone, so
    /// "absent", "null" and "empty" never sign alike.
    public static func signingInput(key: [UInt8]?, timestamp: [UInt8]?, value: [UInt8], header: (String) -> Header) -> [UInt8] {
        var input = LengthPrefixedFields(capacity: value.count + 160)
        input.append(versionTag)
        input.append(key)
        input.append(timestamp)
        for name in coveredHeaders {
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

    /// How a message's signature was judged.
    public enum Verdict: Sendable, Equatable {
        /// Valid, by the scheme named (`v1` or `v2`).
        case valid(scheme: String)
        /// Not valid, and why (never quoting a secret or the signature).
        case invalid(String)
    }

    /// Judges the message's signature against `secret` under `policy` at `nowMs`.
    public static func verdict(secret: Sensitive, policy: Policy, key: [UInt8]?, value: [UInt8], nowMs: Int64,
                               header: (String) -> Header) -> Verdict {
        guard let headerValue = header(Self.header).value else { return .invalid("the request is not signed (header \(Self.header) is missing)") }
        guard headerValue.count <= 80 else { return .invalid("the \(Self.header) header is too long") }
        let text = String(decoding: headerValue, as: UTF8.self)
        if text.hasPrefix("v2=") {
            guard let given = Crypto.bytes(fromHex: String(text.dropFirst(3))), given.count == 32 else {
                return .invalid("the \(Self.header) header must be v2=<64 hex digits of HMAC-SHA256>")
            }
            let timestamp = header(timestampHeader).value
            guard let timestamp, let timestampMs = parseTimestamp(timestamp) else {
                return .invalid("a v2 signature needs header \(timestampHeader) (epoch milliseconds)")
            }
            let input = signingInput(key: key, timestamp: timestamp, value: value, header: header)
            guard Crypto.constantTimeEquals(given, Crypto.hmacSHA256(key: Array(secret.revealed.utf8), data: input)) else {
                return .invalid("the request signature does not match")
            }
            let (difference, overflow) = nowMs.subtractingReportingOverflow(timestampMs)
            guard !overflow, difference.magnitude <= policy.maxSkewMs.magnitude else {
                return .invalid("the request timestamp is outside the accepted window of ±\(policy.maxSkewMs / 1000) s")
            }
            return .valid(scheme: "v2")
        }
        if text.hasPrefix("v1=") {
            guard policy.acceptsV1 else { return .invalid("v1 signatures are not accepted for this program (sign with v2)") }
            guard let given = Crypto.bytes(fromHex: String(text.dropFirst(3))), given.count == 32 else {
                return .invalid("the \(Self.header) header must be v1=<64 hex digits of HMAC-SHA256>")
            }
            let expected = Crypto.hmacSHA256(key: Array(secret.revealed.utf8), data: value)
            return Crypto.constantTimeEquals(given, expected) ? .valid(scheme: "v1") : .invalid("the request signature does not match")
        }
        return .invalid("the \(Self.header) header must be v2=<hex HMAC-SHA256>")
    }

    /// Epoch milliseconds from 1–19 ASCII digits, nil otherwise.
    static func parseTimestamp(_ bytes: [UInt8]) -> Int64? {
        guard (1...19).contains(bytes.count), bytes.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(String(decoding: bytes, as: UTF8.self))
    }
}

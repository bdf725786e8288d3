extension RequestSignature {
    /// How a message's signature was judged.
    public enum Verdict: Sendable, Equatable {
        /// Valid, by the scheme named (`v1`, `v2` or `v3`).
        case valid(scheme: String)
        /// Not valid, and why (never quoting a secret or the signature).
        case invalid(String)
    }

    /// Judges the signature of a message read from `partition` against `secret` under `policy` at
    /// `nowMs`. A v3 signature is valid only on the partition it names: a byte-for-byte copy of a
    /// signed request on another partition (where another worker's duplicate filter and markers
    /// know nothing of it) is not authentic.
    public static func verdict(secret: Sensitive, policy: Policy, key: [UInt8]?, value: [UInt8], partition: Int32, nowMs: Int64,
                               header: (String) -> Header) -> Verdict {
        guard let headerValue = header(Self.header).value else { return .invalid("the request is not signed (header \(Self.header) is missing)") }
        guard headerValue.count <= 80 else { return .invalid("the \(Self.header) header is too long") }
        let text = String(decoding: headerValue, as: UTF8.self)
        for version in [Version.v3, .v2] where text.hasPrefix(version.rawValue + "=") {
            if version == .v2 && !policy.acceptsV2 {
                return .invalid("v2 signatures are not accepted for this program (sign with v3, which covers the partition)")
            }
            return keyedVerdict(version, hex: String(text.dropFirst(3)), secret: secret, policy: policy, key: key, value: value,
                                partition: partition, nowMs: nowMs, header: header)
        }
        if text.hasPrefix("v1=") {
            guard policy.acceptsV1 else { return .invalid("v1 signatures are not accepted for this program (sign with v3)") }
            guard let given = Crypto.bytes(fromHex: String(text.dropFirst(3))), given.count == 32 else {
                return .invalid("the \(Self.header) header must be v1=<64 hex digits of HMAC-SHA256>")
            }
            let expected = Crypto.hmacSHA256(key: Array(secret.revealed.utf8), data: value)
            return Crypto.constantTimeEquals(given, expected) ? .valid(scheme: "v1") : .invalid("the request signature does not match")
        }
        return .invalid("the \(Self.header) header must be v3=<hex HMAC-SHA256>")
    }

    private static func keyedVerdict(_ version: Version, hex: String, secret: Sensitive, policy: Policy, key: [UInt8]?, value: [UInt8],
                                     partition: Int32, nowMs: Int64, header: (String) -> Header) -> Verdict {
        guard let given = Crypto.bytes(fromHex: hex), given.count == 32 else {
            return .invalid("the \(Self.header) header must be \(version.rawValue)=<64 hex digits of HMAC-SHA256>")
        }
        let timestamp = header(timestampHeader).value
        guard let timestamp, let timestampMs = parseTimestamp(timestamp) else {
            return .invalid("a \(version.rawValue) signature needs header \(timestampHeader) (epoch milliseconds)")
        }
        let input = signingInput(version, key: key, timestamp: timestamp, value: value, header: header)
        guard Crypto.constantTimeEquals(given, Crypto.hmacSHA256(key: Array(secret.revealed.utf8), data: input)) else {
            return .invalid("the request signature does not match")
        }
        let (difference, overflow) = nowMs.subtractingReportingOverflow(timestampMs)
        guard !overflow, difference.magnitude <= policy.maxSkewMs.magnitude else {
            return .invalid("the request timestamp is outside the accepted window of ±\(policy.maxSkewMs / 1000) s")
        }
        if version == .v3 {
            guard let signed = header(partitionHeader).value.flatMap(parsePartition) else {
                return .invalid("a v3 signature needs header \(partitionHeader) (the partition written to, decimal)")
            }
            guard signed == partition else {
                return .invalid("the request was signed for partition \(signed) and read from partition \(partition): "
                    + "a copy on another partition is not answered")
            }
        }
        return .valid(scheme: version.rawValue)
    }

    /// Epoch milliseconds from 1–19 ASCII digits, nil otherwise.
    static func parseTimestamp(_ bytes: [UInt8]) -> Int64? {
        guard (1...19).contains(bytes.count), bytes.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(String(decoding: bytes, as: UTF8.self))
    }

    /// A partition number from 1–10 ASCII digits (0 to 2147483647), nil otherwise.
    static func parsePartition(_ bytes: [UInt8]) -> Int32? {
        guard (1...10).contains(bytes.count), bytes.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int32(String(decoding: bytes, as: UTF8.self))
    }
}

import Contract
import Kafka

/// The MAC a worker writes on each dead letter (`dlq.mac`) and replay checks: HMAC-SHA256 under
/// a replay key (`dlq.replay_signing_secret_env` / `_file`, the unnamed key, or one of
/// `dlq.replay_keys`, named in `dlq.mac_key_id`) over everything a replay trusts. A record on the
/// dead-letter topic that was not written by a worker holding that key (planted, or altered after
/// it was written) does not verify, so replay refuses it whatever its `dlq.replayable` says.
///
/// The MAC input is a sequence of length-prefixed fields (as in `RequestSignature.signingInput`):
/// the label `provisioner-dlq-mac-v1` (so it can never be read as a request signature, which
/// uses the same key) or, under a named key, the label `provisioner-dlq-mac-v1+key` and the key
/// id; then the key, the value, `dlq.original.topic`, `.partition`, `.offset` and `.timestamp`,
/// `dlq.code`, `dlq.replayable`, then the name and value of each header replay sends again
/// (`replayedHeaders`, in stored order). The header holds `v1=` and the MAC in lowercase hex: a
/// keyed hash, it tells nothing of the values it covers.
public struct DeadLetterSeal: Sendable {
    /// The prefix of a `dlq.mac` value of this version.
    public static let version = "v1="
    private static let label = "provisioner-dlq-mac-v1"
    private static let namedKeyLabel = "provisioner-dlq-mac-v1+key"

    private let key: Sensitive
    /// The replay key's id (`dlq.mac_key_id`); nil for the unnamed key.
    public let keyID: String?

    /// A seal under `key` (a replay key), named `keyID` among the replay keys (nil: the unnamed key).
    public init(key: Sensitive, keyID: String? = nil) {
        self.key = key
        self.keyID = keyID
    }

    /// The headers of a dead letter that a replay sends again with it (trace context and Spring's
    /// reply routing), in stored order. Replay sends exactly these, and the MAC covers exactly these.
    public static func replayedHeaders(_ headers: [KafkaHeader]) -> [KafkaHeader] {
        headers.filter { $0.key == DeadLetterHeader.traceparent || ReplyRoute.headerNames.contains($0.key) }
    }

    /// The `dlq.mac` value for a dead letter with this key, value, headers and provenance.
    public func mac(key recordKey: [UInt8]?, value: [UInt8], headers: [KafkaHeader], provenance: DeadLetterProvenance) -> String {
        let input = Self.input(keyID: keyID, key: recordKey, value: value, headers: headers, provenance: provenance)
        return Self.version + Crypto.hex(Crypto.hmacSHA256(key: Array(key.revealed.utf8), data: input))
    }

    /// The headers that seal a dead letter: `dlq.mac_key_id` under a named key, then `dlq.mac`.
    public func headers(key recordKey: [UInt8]?, value: [UInt8], headers: [KafkaHeader], provenance: DeadLetterProvenance) -> [KafkaHeader] {
        let mac = KafkaHeader(key: DeadLetterHeader.mac, string: mac(key: recordKey, value: value, headers: headers, provenance: provenance))
        guard let keyID else { return [mac] }
        return [KafkaHeader(key: DeadLetterHeader.macKeyID, string: keyID), mac]
    }

    /// Whether `entry` carries one `dlq.mac` that verifies under this key (compared in constant
    /// time), or why not, in a line an operator can act on.
    public func verify(_ entry: DeadLetterEntry) -> Result<Void, RecordProblem> {
        guard let provenance = entry.provenance else {
            return .failure(RecordProblem(entry.provenanceProblem?.reason ?? "no dlq.* provenance headers: not a dead letter a worker wrote"))
        }
        let macs = entry.headers.filter { $0.key == DeadLetterHeader.mac }
        guard let stored = macs.first?.value else {
            return .failure(RecordProblem("""
                no dlq.mac: not written by a worker holding the replay key (planted on the dead-letter topic, or written \
                before dead letters carried a MAC, or by a worker without a replay key); not replayed: \
                send a new request instead
                """))
        }
        guard macs.count == 1 else { return .failure(RecordProblem("more than one dlq.mac header: the record was altered; not replayed")) }
        let expected = mac(key: entry.key, value: entry.value ?? [], headers: entry.headers, provenance: provenance)
        guard Crypto.constantTimeEquals(stored, Array(expected.utf8)) else {
            return .failure(RecordProblem("""
                dlq.mac does not verify: the record was altered after a worker wrote it, or written under another replay key; \
                not replayed (check that this tool's replay keys are the workers' dlq.replay_signing_secret_env / dlq.replay_keys)
                """))
        }
        return .success(())
    }

    /// The exact bytes the MAC covers.
    static func input(keyID: String?, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader], provenance: DeadLetterProvenance) -> [UInt8] {
        var input = LengthPrefixedFields(capacity: value.count + 256)
        func field(_ bytes: [UInt8]?) { input.append(bytes) }
        func text(_ string: String?) { input.append(string) }
        if let keyID {
            text(namedKeyLabel)
            text(keyID)
        } else {
            text(label)
        }
        // An absent key and an empty one are one: Kafka may hand either back for a zero-length key.
        field(key ?? [])
        field(value)
        text(provenance.originalTopic)
        text(String(provenance.originalPartition))
        text(String(provenance.originalOffset))
        text(provenance.originalTimestampMs.map { String($0) })
        text(provenance.code.rawValue)
        text(provenance.isReplayable ? "true" : "false")
        let replayed = replayedHeaders(headers)
        text(String(replayed.count))
        for header in replayed {
            text(header.key)
            field(header.value)
        }
        return input.bytes
    }
}

import Contract
import Kafka

/// Signs request messages the way workers check them (`RequestSignature` v3): pins a message to
/// a partition and adds `x-request-partition`, `x-request-timestamp` and `x-request-signature` to
/// its headers. Used by `provisioner produce --sign-env`, by `dlq replay` with the replay key, and
/// by tests.
public struct RequestSigner: Sendable {
    /// The key (a replay key also seals dead letters: `ReplayKeyring`).
    let secret: Sensitive
    /// The key's id among the program's keys (`x-request-key-id`); nil for an unnamed key.
    let keyID: String?

    /// Creates a signer for `secret` (a program's signing secret, or the replay key), named
    /// `keyID` among the program's keys when the program has named keys.
    public init(secret: Sensitive, keyID: String? = nil) {
        self.secret = secret
        self.keyID = keyID
    }

    /// `headers` with any earlier signature, timestamp, partition or key id removed, then the
    /// partition the record is written to (`partition`), the key id, the timestamp (`nowMs`) and a
    /// v3 signature over `key`, the covered headers among them, and `value`.
    public func signed(key: [UInt8]?, value: [UInt8], headers: [KafkaHeader], partition: Int32, nowMs: Int64) -> [KafkaHeader] {
        let replaced = [RequestSignature.header, RequestSignature.timestampHeader, RequestSignature.partitionHeader, RequestSignature.keyIDHeader]
        var headers = headers.filter { !replaced.contains($0.key) }
        headers.append(KafkaHeader(key: RequestSignature.partitionHeader, string: String(partition)))
        if let keyID { headers.append(KafkaHeader(key: RequestSignature.keyIDHeader, string: keyID)) }
        let signature = RequestSignature.sign(.v3, secret: secret, key: key, timestampMs: nowMs, value: value) { name in
            RequestSignature.Header(headers.last { $0.key == name }.map(\.value))
        }
        headers.append(KafkaHeader(key: RequestSignature.timestampHeader, string: String(nowMs)))
        headers.append(KafkaHeader(key: RequestSignature.header, string: signature))
        return headers
    }

    /// `message` signed at `nowMs` for its partition: the one it names, else the one the
    /// contract's partitioner (`RequestPartitioner`) gives its key on a topic of `partitionCount`
    /// partitions, which it then names.
    public func signed(_ message: KafkaOutgoingMessage, partitionCount: Int, nowMs: Int64) -> KafkaOutgoingMessage {
        var message = message
        let partition = message.partition ?? RequestPartitioner.partition(key: message.key, count: max(1, partitionCount))
        message.partition = partition
        message.headers = signed(key: message.key, value: message.value ?? [], headers: message.headers, partition: partition, nowMs: nowMs)
        return message
    }
}

import Contract
import Kafka

/// Signs request messages the way workers check them (`RequestSignature` v2): adds
/// `x-request-timestamp` and `x-request-signature` to a message's headers. Used by
/// `provisioner produce --sign-env`, by `dlq replay` with the replay key, and by tests.
public struct RequestSigner: Sendable {
    /// The key (the replay key seals dead letters with it: `DeadLetterSeal(signer:)`).
    let secret: Sensitive

    /// Creates a signer for `secret` (a program's signing secret, or the replay key).
    public init(secret: Sensitive) {
        self.secret = secret
    }

    /// `headers` with any earlier signature or timestamp removed, then the timestamp (`nowMs`) and
    /// a v2 signature over `key`, the covered headers among `headers`, and `value`.
    public func signed(key: [UInt8]?, value: [UInt8], headers: [KafkaHeader], nowMs: Int64) -> [KafkaHeader] {
        var headers = headers.filter { $0.key != RequestSignature.header && $0.key != RequestSignature.timestampHeader }
        let signature = RequestSignature.signV2(secret: secret, key: key, timestampMs: nowMs, value: value) { name in
            RequestSignature.Header(headers.last { $0.key == name }.map(\.value))
        }
        headers.append(KafkaHeader(key: RequestSignature.timestampHeader, string: String(nowMs)))
        headers.append(KafkaHeader(key: RequestSignature.header, string: signature))
        return headers
    }

    /// `message` with its headers signed at `nowMs`.
    public func signed(_ message: KafkaOutgoingMessage, nowMs: Int64) -> KafkaOutgoingMessage {
        var message = message
        message.headers = signed(key: message.key, value: message.value ?? [], headers: message.headers, nowMs: nowMs)
        return message
    }
}

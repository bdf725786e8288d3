import Contract
import Kafka

/// Programs configured with `request_signing` only accept requests carrying a valid
/// `RequestSignature` header; others are rejected `unauthenticated` and audited.
struct RequestAuthenticator: Sendable {
    let secrets: [String: Sensitive]

    /// Nil when the program requires no signature or the signature is valid; else why not.
    func problem(program: String, value: [UInt8], headers: [KafkaHeader]) -> String? {
        guard let secret = secrets[program] else { return nil }
        let header = headers.last { $0.key == RequestSignature.header }?.value
        return RequestSignature.problem(headerValue: header, secret: secret, value: value).map { "program \(program): \($0)" }
    }
}

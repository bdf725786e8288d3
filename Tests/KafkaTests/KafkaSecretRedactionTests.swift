@testable import Kafka
import Synchronization
import Testing

/// Issue 29 item 12: librdkafka quotes parts of an invalid `sasl.oauthbearer.config` in its
/// errors ("Unrecognized sasl.oauthbearer.config beginning at: …"); no secret property value may
/// reach an error or a log line through it.
@Suite("Kafka secret redaction", .timeLimit(.minutes(2)))
struct KafkaSecretRedactionTests {
    @Test("a secret value, its space-separated parts and their values after '=' are removed; short fragments and other properties are not")
    func fragmentsAreRemoved() {
        let canary = "cnryOauth" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        KafkaSecretRedaction.register(["sasl.oauthbearer.config": "principal=\(canary)x extension_k=\(canary)y lifeSeconds=60",
                                       "client.id": "plain-\(canary)z"])
        #expect(KafkaConfiguration.isSecret("sasl.oauthbearer.config") && KafkaConfiguration.isSecret("sasl.oauthbearer.client.secret"))
        let quoted = KafkaSecretRedaction.redact("Unrecognized sasl.oauthbearer.config beginning at: extension_k=\(canary)y lifeSeconds=60")
        #expect(!quoted.contains(canary + "y"), "\(quoted)")
        #expect(!KafkaSecretRedaction.redact("non-integral value: \(canary)x").contains(canary + "x"))
        #expect(KafkaSecretRedaction.redact("lifeSeconds=60 stays") == "<redacted> stays", "a whole pair is a part of the value")
        #expect(KafkaSecretRedaction.redact("60 and plain-\(canary)z") == "60 and plain-\(canary)z", "short fragments and other properties stay")
    }

    @Test("a producer with an invalid sasl.oauthbearer.config reports errors without the configuration's secrets")
    func oauthbearerErrorsAreRedacted() async throws {
        let canary = "cnryOauth" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let errors = Mutex<[String]>([])
        let producer: KafkaProducer
        do {
            producer = try KafkaProducer(configuration: [
                "bootstrap.servers": "127.0.0.1:1", "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "OAUTHBEARER",
                "enable.sasl.oauthbearer.unsecure.jwt": "true", "sasl.oauthbearer.config": "principal=admin \(canary)=1",
            ]) { error in errors.withLock { $0.append(error.description) } }
        } catch {
            // A librdkafka that checks the configuration when the client is created says so here.
            #expect(error.description.contains("oauthbearer") && !error.description.contains(canary), "\(error.description)")
            return
        }
        defer { producer.close(timeoutMs: 0) }
        var reported = false
        for _ in 0..<100 where !reported {
            try await Task.sleep(for: .milliseconds(100))
            reported = errors.withLock { $0 }.contains { $0.contains("oauthbearer") }
        }
        let seen = errors.withLock { $0 }
        #expect(reported, "no OAUTHBEARER error was reported, so nothing was checked: \(seen)")
        #expect(!seen.contains { $0.contains(canary) }, "\(seen)")
    }
}

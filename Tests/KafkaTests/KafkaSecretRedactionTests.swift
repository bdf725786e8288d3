@testable import Kafka
import Dispatch
import Synchronization
import Testing

/// librdkafka quotes parts of an invalid `sasl.oauthbearer.config` in its
/// errors ("Unrecognized sasl.oauthbearer.config beginning at: …"); no secret property value may
/// reach an error or a log line through it.
@Suite("Kafka secret redaction", .timeLimit(.minutes(2)))
struct KafkaSecretRedactionTests {
    @Test("the denylist names passwords and passphrases (ssl.key.passphrase, a keystore's), never plain settings")
    func passphrasesAreSecret() {
        #expect(KafkaConfiguration.isSecret("ssl.key.passphrase") && KafkaConfiguration.isSecret("ssl.keystore.passphrase")
                && KafkaConfiguration.isSecret("SSL.Key.Passphrase") && KafkaConfiguration.isSecret("ssl.key.password"))
        #expect(!KafkaConfiguration.isSecret("client.id") && !KafkaConfiguration.isSecret("ssl.endpoint.identification.algorithm"))
    }

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

    /// On librdkafka 2.2.0 and later the producer is made and its errors are checked; below 2.2.0
    /// an unsecured OAUTHBEARER token crashes the process at its first refresh (10 s after a token
    /// fails), so the producer is refused when it is created (`KafkaRuntime.refusal`).
    @Test("a producer with an invalid sasl.oauthbearer.config reports errors without the configuration's secrets (refused below librdkafka 2.2.0)")
    func oauthbearerErrorsAreRedacted() throws {
        let canary = "cnryOauth" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let configuration = [
            "bootstrap.servers": "127.0.0.1:1", "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "OAUTHBEARER",
            "enable.sasl.oauthbearer.unsecure.jwt": "true", "sasl.oauthbearer.config": "principal=admin \(canary)=1",
        ]
        guard KafkaRuntime.release >= KafkaRuntime.unsecuredTokenRefreshFixedIn else {
            let error = #expect(throws: KafkaError.self) { _ = try KafkaProducer(configuration: configuration) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("\(KafkaRuntime.unsecuredTokenRefreshFixedIn) or later") == true, "\(String(describing: error))")
            #expect(error?.description.contains(canary) == false)
            return
        }
        let errors = Mutex<[String]>([])
        let reported = DispatchSemaphore(value: 0)
        // Waited for on this thread, not by sleeping tasks: the error arrives from the producer's
        // poll thread however busy the test run's task threads are.
        let producer = try KafkaProducer(configuration: configuration) { error in
            errors.withLock { $0.append(error.description) }
            if error.description.contains("oauthbearer") { reported.signal() }
        }
        defer { producer.close(timeoutMs: 0) }
        let seen = { errors.withLock { $0 } }
        #expect(reported.wait(timeout: .now() + 8) == .success, "no OAUTHBEARER error was reported, so nothing was checked: \(seen())")
        #expect(!seen().contains { $0.contains(canary) }, "\(seen())")
    }

    @Test("below librdkafka 2.2.0 an unsecured OAUTHBEARER token is refused; other configurations and releases are not", arguments: [
        ("2.0.2", "true", true), ("2.1.1", "TRUE", true), ("2.0.2", "1", true), ("2.0.2", "false", false),
        ("2.2.0", "true", false), ("2.16.1", "true", false),
    ])
    func unsecuredTokensNeedAFixedRelease(version: String, unsecure: String, refused: Bool) throws {
        let release = try #require(KafkaRuntimeVersion(version))
        let refusal = KafkaRuntime.refusal(of: ["sasl.mechanisms": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": unsecure], on: release)
        #expect((refusal != nil) == refused, "\(version) \(unsecure): \(refusal ?? "accepted")")
        #expect(KafkaRuntime.refusal(of: ["security.protocol": "SASL_SSL", "sasl.mechanisms": "SCRAM-SHA-512"], on: release) == nil)
    }
}

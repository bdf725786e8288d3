import Contract
import Foundation
import Observability
@testable import Pipeline
import Testing
import TestSupport

/// `dlq.replay_keys`, `audit.pseudonym_keys` and `kafka_secret_file` as the loader reads them,
/// and what `config check` reports of their keys' lifetimes.
@Suite("Rotating keys and Kafka secret files in the configuration", .timeLimit(.minutes(2)))
struct RotatingKeysConfigurationTests {
    static let base = ["ACME_KEY": "x", "ACME_SIGN": "acme-signing-key-0123456789abcdef01"]

    func load(_ sections: String, env: [String: String] = [:]) throws(ConfigurationError) -> (WorkerConfiguration, [ConfigurationIssue]) {
        let text = """
            {"kafka": {"bootstrap.servers": "127.0.0.1:9092"},
             "programs": {"acme": {"issuer": "imprint", "base_url": "https://api.imprint.example", "api_key_env": "ACME_KEY",
                                   "request_signing": {"secret_env": "ACME_SIGN"}}},
             \(sections)}
            """
        return try WorkerConfiguration.load(json: text, environment: Self.base.merging(env) { $1 }, workerID: "w1", strict: true)
    }

    func expectRefused(_ sections: String, env: [String: String], keyPath: String, words: String, never: String? = nil) {
        do {
            _ = try load(sections, env: env)
            Issue.record("accepted \(sections)")
        } catch {
            #expect(error.issues.contains { $0.keyPath == keyPath && $0.message.contains(words) }, "\(sections): \(error.issues)")
            if let never { #expect(!error.description.contains(never), "a secret value was printed") }
        }
    }

    static let old = "replay-old-key-0123456789abcdef0123"
    static let new = "replay-new-key-0123456789abcdef0123"
    static let audit = "audit-key-one-0123456789abcdef0123"

    @Test("dlq.replay_keys: oldest first beside the unnamed key; each checked like it; retirements reported by config check")
    func replayKeys() throws {
        let sections = """
            "audit": {"pseudonym_key_env": "AUDIT"},
            "dlq": {"replay_signing_secret_env": "OLD", "replay_keys": [{"id": "r2", "secret_env": "NEW", "not_after": "2026-12-10T00:00:00Z"}]}
            """
        let env = ["OLD": Self.old, "NEW": Self.new, "AUDIT": Self.audit]
        let (configuration, issues) = try load(sections, env: env)
        #expect(!issues.contains { $0.keyPath.hasPrefix("dlq") }, "\(issues)")
        #expect(configuration.replayKeyList.map(\.id) == [nil, "r2"])
        #expect(configuration.replayKeyList.map(\.keyPath) == ["dlq.replay_signing_secret_env", "dlq.replay_keys[0].secret_env"])
        let notAfter = try #require(RFC3339.parse("2026-12-10T00:00:00Z"))
        #expect(configuration.keyRetirements(nowMs: notAfter - 8 * 86_400_000).isEmpty)
        let soon = configuration.keyRetirements(nowMs: notAfter - 30 * 3_600_000)
        #expect(soon.map(\.keyPath) == ["dlq.replay_keys[0].secret_env"] && soon.first?.message.contains("key 'r2' retires at") == true
                && soon.first?.message.contains("(in 30 h)") == true, "\(soon)")
        #expect(configuration.keyRetirements(nowMs: notAfter).contains { $0.keyPath == "dlq.replay_keys[0].secret_env" && $0.message.contains("retired at") })

        // A named replay key equal to a program's signing secret, too short, or unset: refused by key path, never by value.
        expectRefused(sections, env: env.merging(["NEW": Self.base["ACME_SIGN"]!]) { $1 }, keyPath: "dlq.replay_keys[0].secret_env",
                      words: "must differ from every program's signing secret", never: Self.base["ACME_SIGN"])
        expectRefused(sections, env: env.merging(["NEW": "short-replay"]) { $1 }, keyPath: "dlq.replay_keys[0].secret_env",
                      words: "shorter than 32 bytes", never: "short-replay")
        expectRefused(sections, env: ["OLD": Self.old, "AUDIT": Self.audit], keyPath: "dlq.replay_keys[0].secret_env", words: "not set")
        expectRefused(#""audit": {"pseudonym_key_env": "AUDIT"}, "dlq": {"replay_keys": [{"id": "r:2", "secret_env": "NEW"}]}"#, env: env,
                      keyPath: "dlq.replay_keys[0].id", words: "1 to 64")
    }

    @Test("audit.pseudonym_keys: named keys replace the default variable; ids of at most 16; each at least 32 bytes; retirements reported")
    func pseudonymKeys() throws {
        let sections = #""audit": {"pseudonym_keys": [{"id": "a1", "secret_env": "A1", "not_after": "2026-12-10T00:00:00Z"}, {"id": "a2", "secret_env": "A2"}]}"#
        // No PROVISIONER_AUDIT_KEY in the environment: only the listed keys are read.
        let env = ["A1": Self.audit, "A2": Self.new]
        let (configuration, _) = try load(sections, env: env)
        #expect(configuration.pseudonymKey == nil)
        #expect(configuration.pseudonymKeyList.map(\.id) == ["a1", "a2"])
        let notAfter = try #require(RFC3339.parse("2026-12-10T00:00:00Z"))
        let soon = configuration.keyRetirements(nowMs: notAfter - 2 * 3_600_000)
        #expect(soon.contains { $0.keyPath == "audit.pseudonym_keys[0].secret_env" && $0.message.contains("key 'a1' retires at") }, "\(soon)")

        // The keys current at a time: a2 makes pseudonyms, a1's ride along until it retires.
        let keys = PseudonymKeys(keys: [.init(id: "a1", secret: Sensitive(Self.audit), notAfterMs: notAfter), .init(id: "a2", secret: Sensitive(Self.new))])
        let during = keys.pseudonymizer(nowMs: notAfter - 1).cardRef(Sensitive("pm_1"))
        let after = keys.pseudonymizer(nowMs: notAfter).cardRef(Sensitive("pm_1"))
        #expect(during.keyID == "a2" && during.previous == Pseudonymizer(key: Sensitive(Self.audit), keyID: "a1").cardRef(Sensitive("pm_1")).text)
        #expect(after.text == during.text && after.previous == nil)

        expectRefused(#""audit": {"pseudonym_keys": [{"id": "a-very-long-key-id", "secret_env": "A1"}]}"#, env: env,
                      keyPath: "audit.pseudonym_keys[0].id", words: "1 to 16")
        expectRefused(sections, env: ["A1": Self.audit, "A2": "short-audit-key"], keyPath: "audit.pseudonym_keys[1].secret_env",
                      words: "shorter than 32 bytes", never: "short-audit-key")
    }

    @Test("kafka_secret_file: the SASL password is read from its file into the Kafka properties; a missing file is named, never a value")
    func kafkaSecretFile() throws {
        let password = "kafka-sasl-password-" + Crypto.hex(Crypto.randomBytes(8))
        let volume = try SecretVolume(["kafka-password": password + "\n"])
        let env = ["PROVISIONER_AUDIT_KEY": Self.audit]
        let sections = #""kafka_secret_file": {"sasl.password": "\#(volume.path("kafka-password"))"}"#
        let (configuration, _) = try load(sections, env: env)
        #expect(configuration.kafka["sasl.password"] == password)
        #expect(configuration.consumerProperties["sasl.password"] == password && configuration.producerProperties["sasl.password"] == password)
        #expect(configuration.secretFiles.map(\.keyPath).contains("kafka_secret_file.sasl.password"))

        expectRefused(#""kafka_secret_file": {"sasl.password": "\#(volume.path("absent"))"}"#, env: env,
                      keyPath: "kafka_secret_file.sasl.password", words: "cannot be read")
        expectRefused(#""kafka_secret_file": {"sasl.password": "relative/password"}"#, env: env,
                      keyPath: "kafka_secret_file.sasl.password", words: "absolute path")
        expectRefused(#""kafka_secret_env": {"sasl.password": "PW"}, "kafka_secret_file": {"sasl.password": "\#(volume.path("kafka-password"))"}"#,
                      env: env.merging(["PW": password]) { $1 }, keyPath: "kafka_secret_file.sasl.password", words: "name the secret once",
                      never: password)
    }
}

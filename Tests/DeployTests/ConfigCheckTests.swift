import Contract
import Foundation
import Kafka
import Pipeline
import TestSupport
import Testing

/// Every worker configuration shipped in `Config/` (and the one in the Kubernetes ConfigMap) passes
/// `provisioner config check`, run as the real binary with the variables it names set.
@Suite("Config/: worker configurations pass config check", .timeLimit(.minutes(5)))
struct ConfigCheckTests {
    @Test("Config/ holds the production and demo worker configurations")
    func inventory() throws {
        let files = try WorkerConfigs.files()
        #expect(files.contains("Config/worker.json"))
        #expect(files.contains("Config/demo.json"))
    }

    @Test("each worker configuration in Config/ passes 'config check' with its named variables set", arguments: try WorkerConfigs.files())
    func passes(_ file: String) throws {
        let configuration = try WorkerConfigs.load(try Repository.text(file))
        let secrets = WorkerConfigs.dummySecrets(for: configuration)
        #expect(!secrets.isEmpty, "a worker configuration names at least the audit key")
        let run = try CommandRun.provisioner(["config", "check", "--config", Repository.path(file)], environment: secrets)
        #expect(run.status == 0, "\(run)")
        #expect(run.standardOutput.contains(": ok ("), "\(run)")
        #expect(run.standardError.isEmpty, "no warnings either: \(run)")
        for value in secrets.values { #expect(!run.standardOutput.contains(value) && !run.standardError.contains(value)) }
    }

    @Test("without its secrets, config check fails and names every variable and file, never a value")
    func namesMissingSecrets() throws {
        let file = "Config/worker.json"
        let configuration = try WorkerConfigs.load(try Repository.text(file))
        #expect(!configuration.secretFiles.isEmpty && !configuration.secretEnvironmentVariables.isEmpty, "worker.json names files and variables")
        let run = try CommandRun.provisioner(["config", "check", "--config", Repository.path(file)])
        #expect(run.status == 1, "\(run)")
        for entry in configuration.secretEnvironmentVariables {
            #expect(run.standardError.contains("\(entry.keyPath): names environment variable \(entry.variable), which is not set"), "\(run)")
        }
        for entry in configuration.secretFiles {
            #expect(run.standardError.contains("\(entry.keyPath): names file \(entry.path), which cannot be read (No such file or directory)"), "\(run)")
        }
    }

    @Test("config check names a secret file that is empty, and passes once it holds a value")
    func namesEmptySecretFile() throws {
        let file = "Config/worker.json"
        let configuration = try WorkerConfigs.load(try Repository.text(file))
        let keyPath = try #require(configuration.secretFiles.first { $0.keyPath.hasPrefix("programs.") }?.keyPath)
        let empty = WorkerConfigs.dummySecrets(for: configuration, overriding: [keyPath: "\n"])
        let path = try #require(empty[WorkerConfigs.overrideVariable(keyPath)])
        let run = try CommandRun.provisioner(["config", "check", "--config", Repository.path(file)], environment: empty)
        #expect(run.status == 1, "\(run)")
        #expect(run.standardError.contains("\(keyPath): names file \(path), which is empty"), "\(run)")
        #expect(run.standardError.contains("has 1 error(s)"), "\(run)")
    }

    @Test("config check refuses a pseudonym key shorter than 32 bytes, naming the setting and never the key", arguments: try WorkerConfigs.files())
    func refusesShortPseudonymKey(_ file: String) throws {
        let configuration = try WorkerConfigs.load(try Repository.text(file))
        let short = "short-audit-key-31-bytes-long!!"
        let pseudonymKey = try #require(configuration.pseudonymKey)
        let keyPath = "audit.pseudonym_key" + pseudonymKey.keySuffix
        let secrets = WorkerConfigs.dummySecrets(for: configuration, overriding: [keyPath: short])
        let source = pseudonymKey.variable.map { "environment variable \($0)" }
            ?? "file \(secrets[WorkerConfigs.overrideVariable(keyPath)] ?? "?")"
        let run = try CommandRun.provisioner(["config", "check", "--config", Repository.path(file)], environment: secrets)
        #expect(run.status == 1, "\(run)")
        #expect(run.standardError.contains("\(keyPath): names \(source), whose value is shorter than 32 bytes"), "\(run)")
        #expect(run.standardError.contains("has 1 error(s)"), "\(run)")
        #expect(!run.standardOutput.contains(short) && !run.standardError.contains(short), "the key was printed")
    }

    @Test("a broken copy of worker.json fails with exit 1, naming each bad key")
    func brokenConfigFails() throws {
        let original = try Repository.json("Config/worker.json")
        let broken = original
            .setting("scheduler.max_in_flight", .string("lots"))
            .setting("breaker.window_secs", .integer(10))
            .setting("programs.acme-dcs.api_secret_file", nil)
        let directory = FileManager.default.temporaryDirectory
        let path = directory.appendingPathComponent("broken-\(UUID().uuidString).json").path
        try Data(JSONWriter.encode(broken)).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var secrets = WorkerConfigs.dummySecrets(for: try WorkerConfigs.load(try Repository.text("Config/worker.json")))
        secrets[WorkerConfigs.overrideVariable("programs.acme-dcs.api_secret_file")] = nil  // would put back the key removed above
        let run = try CommandRun.provisioner(["config", "check", "--config", path], environment: secrets)
        #expect(run.status == 1, "\(run)")
        #expect(run.standardError.contains("scheduler.max_in_flight: must be a whole number"), "\(run)")
        #expect(run.standardError.contains("breaker.window_secs: is not a known key"), "\(run)")
        #expect(run.standardError.contains("programs.acme-dcs.api_secret_env: is required for DCS"), "\(run)")
        #expect(run.standardError.contains("has 3 error(s)"), "\(run)")
    }

    /// Key rotations in progress (a request-signing key, a replay key, an audit pseudonym key):
    /// `config check` passes and warns about each key retiring within 7 days, by id and key path,
    /// never printing a secret.
    @Test("config check reports request-signing, replay and pseudonym keys about to retire")
    func reportsKeysAboutToRetire() throws {
        let original = try Repository.json("Config/worker.json")
        let inTwoDays = RFC3339.format(milliseconds: Int64(Date().timeIntervalSince1970 * 1000) + 2 * 86_400_000)
        let keys = JSONValue.array([
            .object(["id": .string("2026-11"), "secret_env": .string("ACME_SIGNING_PREVIOUS"), "not_after": .string(inTwoDays)]),
            .object(["id": .string("2026-12"), "secret_env": .string("ACME_SIGNING_CURRENT")]),
        ])
        let replayKeys = JSONValue.array([
            .object(["id": .string("r-2026-11"), "secret_env": .string("REPLAY_PREVIOUS"), "not_after": .string(inTwoDays)]),
            .object(["id": .string("r-2026-12"), "secret_env": .string("REPLAY_CURRENT")]),
        ])
        let pseudonymKeys = JSONValue.array([
            .object(["id": .string("a1"), "secret_env": .string("AUDIT_PREVIOUS"), "not_after": .string(inTwoDays)]),
            .object(["id": .string("a2"), "secret_env": .string("AUDIT_CURRENT")]),
        ])
        let rotating = original.setting("programs.acme-imprint.request_signing", .object(["keys": keys]))
            .setting("dlq", .object(["replay_keys": replayKeys]))
            .setting("audit", .object(["pseudonym_keys": pseudonymKeys]))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rotating-\(UUID().uuidString).json").path
        try Data(JSONWriter.encode(rotating)).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var secrets = WorkerConfigs.dummySecrets(for: try WorkerConfigs.load(try Repository.text("Config/worker.json")))
        secrets["ACME_SIGNING_PREVIOUS"] = "previous-signing-key-" + String(repeating: "p", count: 24)
        secrets["ACME_SIGNING_CURRENT"] = "current-signing-key-" + String(repeating: "c", count: 24)
        secrets["REPLAY_PREVIOUS"] = "previous-replay-key-" + String(repeating: "r", count: 24)
        secrets["REPLAY_CURRENT"] = "current-replay-key-" + String(repeating: "s", count: 24)
        secrets["AUDIT_PREVIOUS"] = "previous-audit-key-" + String(repeating: "a", count: 24)
        secrets["AUDIT_CURRENT"] = "current-audit-key-" + String(repeating: "b", count: 24)
        let run = try CommandRun.provisioner(["config", "check", "--config", path], environment: secrets)
        #expect(run.status == 0, "\(run)")
        #expect(run.standardError.contains("programs.acme-imprint.request_signing.keys[0].secret_env: key '2026-11' retires at \(inTwoDays.prefix(16))"),
                "\(run)")
        #expect(!run.standardError.contains("key '2026-12'"), "the current key has no not_after: \(run)")
        #expect(run.standardError.contains("dlq.replay_keys[0].secret_env: key 'r-2026-11' retires at \(inTwoDays.prefix(16))"), "\(run)")
        #expect(run.standardError.contains("audit.pseudonym_keys[0].secret_env: key 'a1' retires at \(inTwoDays.prefix(16))"), "\(run)")
        #expect(!run.standardError.contains("key 'r-2026-12'") && !run.standardError.contains("key 'a2'"), "\(run)")
        for value in secrets.values { #expect(!run.standardOutput.contains(value) && !run.standardError.contains(value)) }
    }

    @Test("the ConfigMap's worker.json is Config/worker.json and passes config check")
    func configMapMatches() throws {
        let text = try WorkerConfigs.configMapText()
        #expect(try JSONParser().parse(text) == (try Repository.json("Config/worker.json")),
                "Deploy/kubernetes/configmap.yaml must carry Config/worker.json unchanged")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("configmap-\(UUID().uuidString).json").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let secrets = WorkerConfigs.dummySecrets(for: try WorkerConfigs.load(text))
        let run = try CommandRun.provisioner(["config", "check", "--config", path],
                                             environment: secrets.merging(["PROVISIONER_KAFKA__SASL_PASSWORD": "dummy"]) { $1 })
        #expect(run.status == 0 && run.standardError.isEmpty, "\(run)")
    }

    @Test("worker.json is production-shaped: TLS to Kafka, no secrets in the file, Kafka fetch defaults, https issuers, bulkheads and rate limits")
    func productionShape() throws {
        let document = try Repository.json("Config/worker.json")
        let configuration = try WorkerConfigs.load(try Repository.text("Config/worker.json"))
        #expect(["SASL_SSL", "SSL"].contains(configuration.kafka["security.protocol"] ?? ""), "brokers are reached over TLS")
        for secretProperty in ["sasl.password", "ssl.key.password", "ssl.keystore.password", "ssl.key.pem", "sasl.oauthbearer.client.secret"] {
            #expect(configuration.consumerProperties[secretProperty] == nil && configuration.producerProperties[secretProperty] == nil,
                    "\(secretProperty) comes from the environment (PROVISIONER_KAFKA__…), never the file")
        }
        #expect(configuration.consumerProperties["fetch.wait.max.ms"] == nil, "production keeps Kafka's fetch.wait.max.ms default")
        #expect(configuration.producerProperties["linger.ms"].flatMap(Int.init).map { $0 >= 1 } ?? true, "no linger.ms=0 tuning in production")
        #expect(configuration.programs.count >= 4)
        #expect(Set(configuration.programs.values.map(\.issuer)) == Set(IssuerKind.allCases))
        for program in configuration.programs.values {
            #expect(program.baseURL.hasPrefix("https://"), "\(program.name)")
            #expect(program.maxInFlight != nil, "\(program.name) has a bulkhead")
            #expect(program.rateLimit != nil, "\(program.name) has a rate limit")
        }
        #expect(configuration.scheduler.defaultBreaker != nil)
        #expect(configuration.reconcileTiersMs.count >= 3)
        #expect(document.at("http.listen")?.stringValue == "0.0.0.0:\(WorkerConfigs.defaultObservabilityPort)",
                "in a container or on a scraped host the endpoint listens on every interface, on the code's default port")
    }

    @Test("librdkafka accepts worker.json's Kafka properties (admin, producer and consumer handles are created)")
    func librdkafkaAcceptsProperties() throws {
        let configuration = try WorkerConfigs.load(try Repository.text("Config/worker.json"))
        // Nothing is contacted: the brokers are replaced by a closed loopback port, and the CA file by a
        // test fixture (a real PEM certificate), so only property names and values are checked.
        let local: [String: String] = [
            "bootstrap.servers": "127.0.0.1:1",
            "ssl.ca.location": Repository.path("Tests/ContractTests/Fixtures/root.pem"),
            "sasl.password": "dummy",
        ]
        let admin = try KafkaAdmin(configuration: configuration.kafka.merging(local) { $1 })
        admin.close()
        let producer = try KafkaProducer(configuration: configuration.producerProperties.merging(local) { $1 })
        producer.close(timeoutMs: 100)
        let consumer = try KafkaConsumer(configuration: configuration.consumerProperties.merging(local) { $1 }, rebalanceListener: nil)
        consumer.close()
    }
}

import Contract
import Foundation
import Observability
@testable import Pipeline
import Testing
import TestSupport

/// `SecretResolver` on real files laid out as a Kubernetes secret volume lays them out
/// (`SecretVolume`: `KEY -> ..data/KEY`, an update a new `..data` symlink renamed over the old one).
@Suite("secret files: resolution and reload")
struct SecretResolverTests {
    static let auditKey = "audit-key-0123456789abcdef0123456789abcdef"
    static let signing = "signing-secret-0123456789abcdef0123456789abcdef"

    /// A worker configuration whose program `files-imprint` reads its API key, its signing secret
    /// and the audit key from `volume`.
    static func configuration(_ volume: SecretVolume) -> WorkerConfiguration {
        var configuration = WorkerConfiguration(workerID: "secret-tests")
        var program = ProgramConfiguration(name: "files-imprint", issuer: .imprint, baseURL: "http://127.0.0.1:1", apiKey: .file(volume.path("api-key")))
        program.requestSigningSecret = .file(volume.path("signing"))
        configuration.programs[program.name] = program
        configuration.pseudonymKey = .file(volume.path("audit-key"))
        configuration.secretReloadIntervalMs = 100
        return configuration
    }

    static func apiKey(_ secrets: WorkerSecrets) -> String? { secrets.endpoints["files-imprint"]?.credentials.apiKey.revealed }

    @Test("a ..data swap puts the new key in use for new requests; a request holding the old secrets keeps its key")
    func swapReloads() throws {
        let volume = try SecretVolume(["api-key": "key-one\n", "signing": Self.signing, "audit-key": Self.auditKey])
        let logs = CapturingLogHandler()
        let metrics = MetricsRegistry()
        let resolver = try SecretResolver(configuration: Self.configuration(volume), environment: [:],
                                          logger: Logger(label: "secrets", handler: logs), metrics: metrics)
        let started = resolver.current
        #expect(Self.apiKey(started) == "key-one", "the trailing line break is not part of the key")
        resolver.refresh()
        #expect(metrics.total("provisioner_secret_reloads_total") == 0, "nothing changed")

        try volume.swap(["api-key": "key-two", "signing": Self.signing, "audit-key": Self.auditKey])
        resolver.refresh()
        #expect(Self.apiKey(resolver.current) == "key-two")
        #expect(Self.apiKey(started) == "key-one", "what a request started with does not change under it")
        #expect(resolver.problem == nil)
        #expect(metrics.total("provisioner_secret_reloads_total") == 1)
        let notices = logs.renderedLines.filter { $0.contains("secret file changed") }
        #expect(notices.count == 1 && notices[0].contains("programs.files-imprint.api_key_file"), "\(logs.renderedLines)")
        for line in logs.renderedLines + [metrics.renderPrometheus()] {
            #expect(!line.contains("key-one") && !line.contains("key-two") && !line.contains(Self.auditKey))
        }
    }

    @Test("a file that goes missing, then empty, keeps the last good value, fails readiness with the reason (logged once) and recovers")
    func unreadableKeepsLastGood() throws {
        let volume = try SecretVolume(["api-key": "key-one", "signing": Self.signing, "audit-key": Self.auditKey])
        let logs = CapturingLogHandler()
        let metrics = MetricsRegistry()
        let resolver = try SecretResolver(configuration: Self.configuration(volume), environment: [:],
                                          logger: Logger(label: "secrets", handler: logs), metrics: metrics)
        let unreadable = ["secret": "programs.files-imprint.api_key_file"]
        #expect(metrics.value("provisioner_secret_unreadable", labels: .init(unreadable)) == 0)

        try volume.swap(["signing": Self.signing, "audit-key": Self.auditKey])
        resolver.refresh()
        resolver.refresh()
        #expect(Self.apiKey(resolver.current) == "key-one")
        let problem = try #require(resolver.problem)
        #expect(problem.contains("programs.files-imprint.api_key_file") && problem.contains(volume.path("api-key"))
                    && problem.contains("No such file or directory"), "\(problem)")
        #expect(metrics.value("provisioner_secret_unreadable", labels: .init(unreadable)) == 1)
        #expect(logs.renderedLines.filter { $0.contains("secret file unusable") }.count == 1, "logged once, not per check: \(logs.renderedLines)")

        try volume.swap(["api-key": "\n", "signing": Self.signing, "audit-key": Self.auditKey])
        resolver.refresh()
        #expect(Self.apiKey(resolver.current) == "key-one")
        #expect(resolver.problem?.contains("which is empty") == true, "\(resolver.problem ?? "")")

        try volume.swap(["api-key": "key-three", "signing": Self.signing, "audit-key": Self.auditKey])
        resolver.refresh()
        #expect(Self.apiKey(resolver.current) == "key-three")
        #expect(resolver.problem == nil)
        #expect(metrics.value("provisioner_secret_unreadable", labels: .init(unreadable)) == 0)
        #expect(logs.renderedLines.contains { $0.contains("secret file usable again") })
        for line in logs.renderedLines + [problem, metrics.renderPrometheus()] {
            #expect(!line.contains("key-one") && !line.contains("key-three") && !line.contains(Self.signing))
        }
    }

    @Test("a new signing secret the checks refuse (shorter than 32 bytes) is not used: the old one stays, readiness says why")
    func refusedValueKeepsOld() throws {
        let volume = try SecretVolume(["api-key": "key-one", "signing": Self.signing, "audit-key": Self.auditKey])
        let resolver = try SecretResolver(configuration: Self.configuration(volume), environment: [:],
                                          logger: Logger(label: "secrets", handler: CapturingLogHandler()), metrics: MetricsRegistry())
        try volume.swap(["api-key": "key-two", "signing": "too-short", "audit-key": Self.auditKey])
        resolver.refresh()
        #expect(resolver.current.authenticator.programs["files-imprint"]?.keys.map(\.secret.revealed) == [Self.signing])
        #expect(Self.apiKey(resolver.current) == "key-two", "the other file's change is used")
        let problem = try #require(resolver.problem)
        #expect(problem.contains("programs.files-imprint.request_signing.secret_file") && problem.contains("shorter than 32 bytes"), "\(problem)")
        #expect(!problem.contains("too-short"))
    }

    @Test("a named signing key's file swapped (..data) is reloaded: the authenticator keeps every key's id and not_after, with the new secret")
    func namedSigningKeyFileReloads() throws {
        let previous = "previous-signing-0123456789abcdef0123456789abcdef"
        let current = "current-signing-0123456789abcdef0123456789abcdef"
        let replaced = "replaced-signing-0123456789abcdef0123456789abcdef"
        let retiresAt = Timestamps.nowMs() + 86_400_000
        let volume = try SecretVolume(["api-key": "key-one", "signing": Self.signing, "audit-key": Self.auditKey,
                                       "key-previous": previous, "key-current": current])
        var configuration = Self.configuration(volume)
        configuration.programs["files-imprint"]?.requestSigningKeys = [
            RequestSigningKey(id: "2026-11", secret: .file(volume.path("key-previous")), notAfterMs: retiresAt,
                              keyPath: "programs.files-imprint.request_signing.keys[0].secret_file"),
            RequestSigningKey(id: "2026-12", secret: .file(volume.path("key-current")),
                              keyPath: "programs.files-imprint.request_signing.keys[1].secret_file"),
        ]
        let logs = CapturingLogHandler()
        let metrics = MetricsRegistry()
        let resolver = try SecretResolver(configuration: configuration, environment: [:],
                                          logger: Logger(label: "secrets", handler: logs), metrics: metrics)
        func keys(_ secrets: WorkerSecrets) -> [String] {
            (secrets.authenticator.programs["files-imprint"]?.keys ?? []).map { "\($0.id ?? "-")=\($0.secret.revealed)@\($0.notAfterMs.map(String.init) ?? "never")" }
        }
        let started = resolver.current
        #expect(keys(started) == ["-=\(Self.signing)@never", "2026-11=\(previous)@\(retiresAt)", "2026-12=\(current)@never"])

        try volume.swap(["api-key": "key-one", "signing": Self.signing, "audit-key": Self.auditKey, "key-previous": previous, "key-current": replaced])
        resolver.refresh()
        #expect(keys(resolver.current) == ["-=\(Self.signing)@never", "2026-11=\(previous)@\(retiresAt)", "2026-12=\(replaced)@never"])
        #expect(keys(started).last == "2026-12=\(current)@never", "a request holding the old secrets keeps its key")
        #expect(resolver.problem == nil)
        #expect(metrics.total("provisioner_secret_reloads_total") == 1)
        let notices = logs.renderedLines.filter { $0.contains("secret file changed") }
        #expect(notices.count == 1 && notices[0].contains("programs.files-imprint.request_signing.keys[1].secret_file"), "\(logs.renderedLines)")

        // A named key's new secret gets the same checks as at start: too short is refused.
        try volume.swap(["api-key": "key-one", "signing": Self.signing, "audit-key": Self.auditKey, "key-previous": "short", "key-current": replaced])
        resolver.refresh()
        #expect(keys(resolver.current)[1] == "2026-11=\(previous)@\(retiresAt)")
        let problem = try #require(resolver.problem)
        #expect(problem.contains("programs.files-imprint.request_signing.keys[0].secret_file") && problem.contains("shorter than 32 bytes"), "\(problem)")
        for line in logs.renderedLines + [problem, metrics.renderPrometheus()] {
            #expect(!line.contains(previous) && !line.contains(current) && !line.contains(replaced))
        }
    }

    @Test("a signing key's file swapped to the replay key's value is refused: the old secret stays, readiness names both keys")
    func signingFileEqualToReplayRefused() throws {
        let replay = "replay-key-0123456789abcdef0123456789abcdef"
        let volume = try SecretVolume(["api-key": "key-one", "signing": Self.signing, "audit-key": Self.auditKey])
        var configuration = Self.configuration(volume)
        configuration.replaySigningSecret = .environment("REPLAY")
        let resolver = try SecretResolver(configuration: configuration, environment: ["REPLAY": replay],
                                          logger: Logger(label: "secrets", handler: CapturingLogHandler()), metrics: MetricsRegistry())
        try volume.swap(["api-key": "key-one", "signing": replay, "audit-key": Self.auditKey])
        resolver.refresh()
        #expect(resolver.current.authenticator.programs["files-imprint"]?.keys.map(\.secret.revealed) == [Self.signing])
        let problem = try #require(resolver.problem)
        #expect(problem.contains("programs.files-imprint.request_signing.secret_file") && problem.contains("dlq.replay_signing_secret_env")
                    && problem.contains("must differ"), "\(problem)")
        #expect(!problem.contains(replay))
    }

    @Test("a secret missing or empty at start is a configuration error naming the key and the file, never a value")
    func missingAtStart() throws {
        let volume = try SecretVolume(["api-key": "", "audit-key": Self.auditKey])
        do {
            _ = try SecretResolver(configuration: Self.configuration(volume), environment: [:],
                                   logger: Logger(label: "secrets", handler: CapturingLogHandler()), metrics: MetricsRegistry())
            Issue.record("a worker started without its secrets")
        } catch {
            let text = "\(error)"
            #expect(text.contains("programs.files-imprint.api_key_file: names file \(volume.path("api-key")), which is empty"), "\(text)")
            #expect(text.contains("programs.files-imprint.request_signing.secret_file: names file \(volume.path("signing")), which cannot be read (No such file or directory)"),
                    "\(text)")
            #expect(!text.contains(Self.auditKey))
        }
    }

    @Test("watching: a swap is picked up within the reload interval, with no call to refresh")
    func watchingPicksUpSwap() async throws {
        let volume = try SecretVolume(["api-key": "key-one", "signing": Self.signing, "audit-key": Self.auditKey])
        let resolver = try SecretResolver(configuration: Self.configuration(volume), environment: [:],
                                          logger: Logger(label: "secrets", handler: CapturingLogHandler()), metrics: MetricsRegistry())
        resolver.startWatching(timer: DispatchTimer(label: "secret-tests"), clock: { Timestamps.nowMs() })
        defer { resolver.stopWatching() }
        try volume.swap(["api-key": "key-two", "signing": Self.signing, "audit-key": Self.auditKey])
        #expect(try await Eventually.holds(within: .seconds(10)) { Self.apiKey(resolver.current) == "key-two" })
    }

    @Test("the configuration names a secret by _env or _file, not both, and a file by an absolute path")
    func configurationForms() throws {
        func issues(_ program: String) -> String {
            let text = """
                {"kafka": {"bootstrap.servers": "127.0.0.1:9092"}, "audit": {"pseudonym_key_file": "/run/secrets/audit"},
                 "programs": {"p": {"issuer": "imprint", "base_url": "https://issuer.example", \(program)}}}
                """
            do {
                _ = try WorkerConfiguration.load(json: text, environment: [:], workerID: "w", strict: true, requireSecrets: false)
                return ""
            } catch {
                return "\(error)"
            }
        }
        #expect(issues(#""api_key_env": "K", "api_key_file": "/run/k""#).contains("programs.p.api_key_file: and api_key_env are both set"))
        #expect(issues(#""api_key_file": "run/k""#).contains("programs.p.api_key_file: must be an absolute path"))
        #expect(issues(#""api_key_header": "Authorization""#).contains("programs.p.api_key_env: is required (or api_key_file)"))
        #expect(issues(#""api_key_file": "/run/k""#).isEmpty)
        let (configuration, _) = try WorkerConfiguration.load(
            json: #"{"kafka": {"bootstrap.servers": "b:9092"}, "programs": {"p": {"issuer": "dcs", "base_url": "https://d.example", "api_key_file": "/s/k", "api_secret_file": "/s/s"}}}"#,
            environment: ["PROVISIONER_PROGRAMS__P__API_KEY_FILE": "/elsewhere/k"], workerID: "w", strict: true, requireSecrets: false)
        #expect(configuration.programs["p"]?.apiKey == .file("/elsewhere/k"), "a file path may be overridden like any key")
        #expect(configuration.programs["p"]?.apiSecret == .file("/s/s"))
    }
}

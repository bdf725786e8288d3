import Contract
import Foundation
import HTTP
import Pipeline

/// The worker configurations shipped in the repository and what they name.
enum WorkerConfigs {
    /// Every worker configuration in `Config/`: each `.json` file except the topic layout.
    static func files() throws -> [String] {
        // topics.json is the topic layout and simulator-profile*.json are simulator profiles; the rest are worker configurations.
        try Repository.files(in: "Config", endingWith: ".json")
            .filter { $0 != "topics.json" && !$0.hasPrefix("simulator-profile") }.map { "Config/\($0)" }
    }

    /// Loads `text` as `config check` does, without requiring the named secrets to be set.
    static func load(_ text: String, environment: [String: String] = [:]) throws -> WorkerConfiguration {
        try WorkerConfiguration.load(json: text, environment: environment, workerID: "deploy-tests", strict: true, requireSecrets: false).0
    }

    /// An environment that gives every secret `configuration` names a dummy value (each at least
    /// 32 bytes, the shortest pseudonym key the worker accepts), or the value `overriding` gives its
    /// key path: a variable for each `…_env` secret; for each `…_file` secret a file in a temporary
    /// directory and a `PROVISIONER_…` override pointing the key at it (the shipped paths, such as
    /// /run/secrets/provisioner, do not exist here).
    static func dummySecrets(for configuration: WorkerConfiguration, overriding: [String: String] = [:]) -> [String: String] {
        var environment: [String: String] = [:]
        for (keyPath, variable) in configuration.secretEnvironmentVariables where environment[variable] == nil {
            environment[variable] = overriding[keyPath] ?? "dummy-\(variable.lowercased())-0123456789abcdef0123456789abcdef"
        }
        guard !configuration.secretFiles.isEmpty else { return environment }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("deploy-tests-secrets-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (keyPath, path) in configuration.secretFiles {
            let name = (path as NSString).lastPathComponent
            let file = directory.appendingPathComponent(keyPath).path
            let value = overriding[keyPath] ?? "dummy-\(name.lowercased())-0123456789abcdef0123456789abcdef"
            _ = FileManager.default.createFile(atPath: file, contents: Data(value.utf8))
            environment[overrideVariable(keyPath)] = file
        }
        return environment
    }

    /// The `PROVISIONER_…` variable that overrides configuration key `keyPath`
    /// (`programs.acme-dcs.api_key_file` → `PROVISIONER_PROGRAMS__ACME_DCS__API_KEY_FILE`).
    static func overrideVariable(_ keyPath: String) -> String {
        "PROVISIONER_" + keyPath.split(separator: ".").map { $0.uppercased().replacingOccurrences(of: "-", with: "_") }.joined(separator: "__")
    }

    /// The `worker.json` held by the ConfigMap in `Deploy/kubernetes/configmap.yaml`.
    static func configMapText() throws -> String {
        let configMap = try YAMLDocuments.resource(kind: "ConfigMap", named: "provisioner-config")
        guard let text = configMap.at("data")?["worker.json"]?.stringValue else {
            throw CommandRun.Failure(description: "the ConfigMap provisioner-config has no data.worker.json")
        }
        return text
    }

    /// The ConfigMap's configuration, loaded.
    static func configMap() throws -> WorkerConfiguration { try load(try configMapText()) }

    /// The port of `host:port`.
    static func port(_ listen: String?) -> Int? {
        listen.flatMap(HostPort.init).map { Int($0.port) }
    }

    /// The port the code listens on by default (`WorkerConfiguration.httpListen`): the one every
    /// probe, Service and scrape setting must use.
    static var defaultObservabilityPort: Int {
        port(WorkerConfiguration(workerID: "defaults").httpListen) ?? -1
    }

    /// Milliseconds `Worker.waitUntilStopped` may spend after the drain: the commits
    /// (`WorkerConfiguration.forcedCommitTimeoutMs`), producer flush (10 s) plus producer close
    /// (5 s), as written in Sources/Pipeline/Runtime/Worker.swift.
    static let stopAfterDrainMs: Int64 = WorkerConfiguration(workerID: "defaults").forcedCommitTimeoutMs + 15_000
}

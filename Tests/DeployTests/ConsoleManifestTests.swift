import Console
import Contract
import Foundation
import Pipeline
import Testing

/// `Deploy/console/`: the optional operator console, held against the code and the worker
/// manifests (its own ServiceAccount, loopback only with no Service or Ingress, a NetworkPolicy
/// with no ingress, the workers' group and topics, every worker scraped, secrets by name).
@Suite("Deploy/console: the optional console manifests", .timeLimit(.minutes(5)))
struct ConsoleManifestTests {
    static let directory = "Deploy/console"
    static let labels: JSONValue = .object(["app.kubernetes.io/name": .string("provisioner"), "app.kubernetes.io/component": .string("console")])
    static let workerLabels: JSONValue = .object(["app.kubernetes.io/name": .string("provisioner"), "app.kubernetes.io/component": .string("worker")])

    static func documents() throws -> [(file: String, document: JSONValue)] {
        let files = try Repository.files(in: directory, endingWith: ".yaml")
        let parsed = try YAMLDocuments.parse(files.map { "\(directory)/\($0)" })
        return files.flatMap { file in (parsed["\(directory)/\(file)"] ?? []).map { (file, $0) } }
    }

    static func resource(_ kind: String, _ name: String) throws -> JSONValue {
        let matches = try documents().map(\.document).filter { $0["kind"]?.stringValue == kind && $0.at("metadata.name")?.stringValue == name }
        guard matches.count == 1, let match = matches.first else {
            throw CommandRun.Failure(description: "expected one \(kind) \(name) in \(directory), found \(matches.count)")
        }
        return match
    }

    static func consoleText() throws -> String {
        try #require(try resource("ConfigMap", "provisioner-console-config").at("data")?["console.json"]?.stringValue)
    }

    @Test("the kustomization lists every manifest but the secret example; no Service, no Ingress")
    func layout() throws {
        let documents = try Self.documents()
        let kustomization = try #require(documents.first { $0.file == "kustomization.yaml" }?.document)
        let listed = Set(kustomization["resources"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        let files = Set(try Repository.files(in: Self.directory, endingWith: ".yaml"))
        #expect(listed == files.subtracting(["kustomization.yaml", "secret.example.yaml"]))
        let kinds = documents.compactMap { $0.document["kind"]?.stringValue }
        #expect(!kinds.contains("Service") && !kinds.contains("Ingress"), "no ingress by default: \(kinds)")
    }

    @Test("its own ServiceAccount without a token; the pod runs 'console' on its ConfigMap, non-root, read-only, no ports")
    func pod() throws {
        let account = try Self.resource("ServiceAccount", "provisioner-console")
        #expect(account["automountServiceAccountToken"] == .bool(false))
        let deployment = try Self.resource("Deployment", "provisioner-console")
        #expect(deployment.at("spec.template.spec.serviceAccountName")?.stringValue == "provisioner-console")
        #expect(deployment.at("spec.template.spec.automountServiceAccountToken") == .bool(false))
        #expect(deployment.at("spec.template.metadata.labels") == Self.labels)
        #expect(deployment.at("spec.replicas")?.int64Value == 1, "sessions and replay jobs live in one process")
        let container = try #require(deployment.at("spec.template.spec.containers")?.arrayValue?.first)
        #expect(container["args"] == .array(["console", "--config", "/etc/provisioner/console.json"].map(JSONValue.string)))
        #expect(container["ports"] == nil, "it listens on loopback: nothing to expose")
        #expect(deployment.at("spec.template.spec.securityContext.runAsNonRoot") == .bool(true))
        #expect(container.at("securityContext.readOnlyRootFilesystem") == .bool(true))
        #expect(container.at("securityContext.capabilities.drop") == .array([.string("ALL")]))
        let volumes = deployment.at("spec.template.spec.volumes")?.arrayValue ?? []
        #expect(volumes.contains { $0.at("configMap.name")?.stringValue == "provisioner-console-config" })
    }

    @Test("the config loads strictly, listens on loopback, reads the workers' group and topics, scrapes every worker pod")
    func configuration() throws {
        let text = try Self.consoleText()
        let (worker, issues) = try WorkerConfiguration.load(json: text, environment: [:], workerID: "deploy-tests", strict: true,
                                                            requireSecrets: false, requirePrograms: false)
        #expect(issues.filter { $0.severity == .error }.isEmpty, "\(issues)")
        let console = try ConsoleConfiguration.parse(json: text)
        #expect(console.listen.host == "127.0.0.1", "loopback: reached by port-forward only")
        #expect(!console.tokens.isEmpty)
        let workers = try WorkerConfigs.configMap()
        #expect(worker.groupID == workers.groupID)
        #expect(worker.topics.all == workers.topics.all)
        #expect(worker.kafka["sasl.username"] != workers.kafka["sasl.username"], "its own Kafka principal")
        let service = try YAMLDocuments.resource(kind: "Service", named: "provisioner-metrics")
        #expect(service.at("spec.clusterIP")?.stringValue == "None", "headless: DNS lists every worker pod")
        let port = WorkerConfigs.defaultObservabilityPort
        #expect(console.metricsEndpoints == ["dns+http://provisioner-metrics.provisioner.svc.cluster.local:\(port)/metrics"])
        // Every variable the config names comes from the Deployment's env, from a Secret key the example lists.
        let container = try #require(try Self.resource("Deployment", "provisioner-console").at("spec.template.spec.containers")?.arrayValue?.first)
        let env = container["env"]?.arrayValue ?? []
        let example = try #require(try Self.documents().first { $0.file == "secret.example.yaml" }?.document)
        for variable in Set(worker.kafkaSecretVariables.values).union([worker.replaySigningSecret?.variable].compactMap { $0 }) {
            let entry = try #require(env.first { $0["name"]?.stringValue == variable }, "\(variable)")
            #expect(entry["value"] == nil, "\(variable) from a Secret, never a literal")
            let key = try #require(entry.at("valueFrom.secretKeyRef.key")?.stringValue)
            #expect(entry.at("valueFrom.secretKeyRef.name")?.stringValue == example.at("metadata.name")?.stringValue)
            #expect(example["stringData"]?[key] != nil, "\(key)")
        }
    }

    @Test("NetworkPolicy: no ingress to the console; out only DNS, Kafka and the workers' metrics port, which the workers let it reach")
    func networkPolicies() throws {
        let policy = try Self.resource("NetworkPolicy", "provisioner-console")
        #expect(policy.at("spec.podSelector.matchLabels") == Self.labels)
        #expect(Set(policy.at("spec.policyTypes")?.arrayValue?.compactMap(\.stringValue) ?? []) == ["Ingress", "Egress"])
        #expect(policy.at("spec.ingress") == .array([]), "no ingress at all")
        let egress = (policy.at("spec.egress")?.arrayValue ?? []).flatMap { $0["ports"]?.arrayValue ?? [] }
        let allowed = Set(egress.compactMap { port in port["port"]?.int64Value.map { "\(port["protocol"]?.stringValue ?? "TCP")/\($0)" } })
        let kafka = try WorkerConfiguration.load(json: try Self.consoleText(), environment: [:], workerID: "t", strict: false,
                                                 requireSecrets: false, requirePrograms: false).0.kafka["bootstrap.servers"] ?? ""
        let kafkaPorts = Set(kafka.split(separator: ",").compactMap { WorkerConfigs.port(String($0)).map { "TCP/\($0)" } })
        #expect(allowed == Set(["UDP/53", "TCP/53", "TCP/\(WorkerConfigs.defaultObservabilityPort)"]).union(kafkaPorts), "\(allowed)")
        let scrape = try Self.resource("NetworkPolicy", "provisioner-console-scrape")
        #expect(scrape.at("spec.podSelector.matchLabels") == Self.workerLabels)
        #expect(scrape.at("spec.ingress.0.from.0.podSelector.matchLabels") == Self.labels)
        #expect(scrape.at("spec.ingress.0.ports.0.port")?.int64Value == Int64(WorkerConfigs.defaultObservabilityPort))
    }
}

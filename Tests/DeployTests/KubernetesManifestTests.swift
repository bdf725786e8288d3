import Contract
import Foundation
import Observability
import Pipeline
import Testing

/// `Deploy/kubernetes/`: parsed as YAML by PyYAML, then held against the code and the configuration
/// it deploys (probe paths and port, drain bound, topic and group names, topic layout).
@Suite("Deploy/kubernetes: manifests agree with the code and the config", .timeLimit(.minutes(5)))
struct KubernetesManifestTests {
    private static let podLabels: JSONValue = .object([
        "app.kubernetes.io/name": .string("provisioner"), "app.kubernetes.io/component": .string("worker"),
    ])

    private func deployment() throws -> JSONValue { try YAMLDocuments.resource(kind: "Deployment", named: "provisioner") }

    private func container() throws -> JSONValue {
        let containers = try #require(try deployment().at("spec.template.spec.containers")?.arrayValue)
        return try #require(containers.first { $0["name"]?.stringValue == "worker" })
    }

    /// A probe's or Service's port: a number, or a container port name resolved to its number.
    private func resolve(_ port: JSONValue?) throws -> Int? {
        if let number = port?.int64Value { return Int(number) }
        let name = try #require(port?.stringValue)
        let ports = try container()["ports"]?.arrayValue ?? []
        return ports.first { $0["name"]?.stringValue == name }?["containerPort"]?.int64Value.map(Int.init)
    }

    @Test("every manifest parses; every document has apiVersion, kind and metadata.name; kustomization lists all but the secret example")
    func parses() throws {
        let documents = try YAMLDocuments.kubernetes()
        #expect(documents.count >= 15)
        for (file, document) in documents {
            #expect(document["apiVersion"]?.stringValue?.isEmpty == false, "\(file)")
            #expect(document["kind"]?.stringValue?.isEmpty == false, "\(file)")
            if document["kind"]?.stringValue != "Kustomization" {
                #expect(document.at("metadata.name")?.stringValue?.isEmpty == false, "\(file)")
            }
        }
        let kustomization = try YAMLDocuments.load("Deploy/kubernetes/kustomization.yaml").first
        let listed = Set(kustomization?["resources"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        let files = Set(try Repository.files(in: "Deploy/kubernetes", endingWith: ".yaml"))
        #expect(listed == files.subtracting(["kustomization.yaml", "secret.example.yaml"]))
    }

    @Test("probes use the ObservabilityServer paths on the code's default port, which http.listen binds on all interfaces")
    func probes() throws {
        let port = WorkerConfigs.defaultObservabilityPort
        #expect(port == 9464)
        let container = try container()
        let metricsPort = container["ports"]?.arrayValue?.first { $0["name"]?.stringValue == "metrics" }
        #expect(metricsPort?["containerPort"]?.int64Value == Int64(port))
        for (probe, path) in [("livenessProbe", ObservabilityServer.livenessPath), ("readinessProbe", ObservabilityServer.readinessPath),
                              ("startupProbe", ObservabilityServer.livenessPath)] {
            #expect(container.at("\(probe).httpGet")?["path"]?.stringValue == path, "\(probe)")
            #expect(try resolve(container.at("\(probe).httpGet")?["port"]) == port, "\(probe)")
        }
        let listen = try #require(try WorkerConfigs.configMap().httpListen)
        #expect(listen == "0.0.0.0:\(port)", "the pod's http.listen must be reachable by the kubelet and Prometheus")
    }

    @Test("terminationGracePeriodSeconds outlasts the drain bound of the ConfigMap's config plus the flush and close after it")
    func gracePeriod() throws {
        let drainMs = try WorkerConfigs.configMap().shutdownDrainMs
        let grace = try #require(try deployment().at("spec.template.spec.terminationGracePeriodSeconds")?.int64Value)
        #expect(grace * 1000 > drainMs + WorkerConfigs.stopAfterDrainMs, "grace \(grace) s, drain \(drainMs) ms")
    }

    @Test("the pod runs the image's worker command on the ConfigMap, non-root, read-only, with limits")
    func podShape() throws {
        let deployment = try deployment()
        let container = try container()
        #expect(container["args"] == .array(["worker", "--config", "/etc/provisioner/worker.json"].map(JSONValue.string)))
        #expect(deployment.at("spec.selector.matchLabels") == Self.podLabels)
        #expect(deployment.at("spec.template.metadata.labels") == Self.podLabels)
        #expect(deployment.at("spec.replicas") == nil, "the ScaledObject owns the replica count")
        #expect(deployment.at("spec.template.spec.securityContext.runAsNonRoot") == .bool(true))
        #expect(container.at("securityContext.readOnlyRootFilesystem") == .bool(true))
        #expect(container.at("securityContext.allowPrivilegeEscalation") == .bool(false))
        #expect(container.at("securityContext.capabilities.drop") == .array([.string("ALL")]))
        for key in ["requests.cpu", "requests.memory", "limits.memory"] {
            #expect(container.at("resources.\(key)")?.stringValue != nil, "\(key)")
        }
        let mounts = container["volumeMounts"]?.arrayValue ?? []
        let configMount = try #require(mounts.first { $0["mountPath"]?.stringValue == "/etc/provisioner" })
        let volumes = deployment.at("spec.template.spec.volumes")?.arrayValue ?? []
        let configVolume = try #require(volumes.first { $0["name"] == configMount["name"] })
        #expect(configVolume.at("configMap.name")?.stringValue == "provisioner-config")
        #expect(configVolume.at("configMap.items.0.path")?.stringValue == "worker.json")
        // The Kafka CA file the config names is mounted.
        let caPath = try #require(try WorkerConfigs.configMap().kafka["ssl.ca.location"])
        let caDirectory = (caPath as NSString).deletingLastPathComponent
        let caMount = try #require(mounts.first { $0["mountPath"]?.stringValue == caDirectory }, "mount for \(caPath)")
        let caVolume = try #require(volumes.first { $0["name"] == caMount["name"] })
        #expect(caVolume.at("secret.items.0.path")?.stringValue == (caPath as NSString).lastPathComponent)
    }

    @Test("every secret the config names comes from a Secret key (never a literal): files from a whole-Secret volume (no subPath, so rotations reach the pod), variables from secretKeyRef; the example Secret lists each key")
    func secretsByName() throws {
        let configuration = try WorkerConfigs.configMap()
        let environment = try container()["env"]?.arrayValue ?? []
        let mounts = try container()["volumeMounts"]?.arrayValue ?? []
        let volumes = try deployment().at("spec.template.spec.volumes")?.arrayValue ?? []
        let secretExamples = try YAMLDocuments.load("Deploy/kubernetes/secret.example.yaml")
        func exampleKeys(_ secret: String) -> Set<String> {
            Set(secretExamples.first { $0.at("metadata.name")?.stringValue == secret }?["stringData"]?.objectValue?.keys.map { $0 } ?? [])
        }
        #expect(configuration.secretFiles.count >= 8, "the issuer keys, signing secrets, replay and audit keys come from files")
        for (keyPath, path) in configuration.secretFiles {
            let directory = (path as NSString).deletingLastPathComponent
            let mount = try #require(mounts.first { $0["mountPath"]?.stringValue == directory }, "\(keyPath): no mount at \(directory)")
            #expect(mount["subPath"] == nil, "\(keyPath): a subPath mount never sees a rotated Secret")
            let volume = try #require(volumes.first { $0["name"] == mount["name"] })
            let secret = try #require(volume.at("secret.secretName")?.stringValue, "\(keyPath): the volume is a Secret")
            #expect(volume.at("secret.items") == nil, "\(keyPath): every key of the Secret is a file")
            #expect(exampleKeys(secret).contains((path as NSString).lastPathComponent), "secret.example.yaml shows \(secret) key for \(keyPath)")
        }
        var required = configuration.secretEnvironmentVariables.map(\.variable)
        required.append("PROVISIONER_KAFKA__SASL_PASSWORD")
        for variable in required {
            let entry = try #require(environment.first { $0["name"]?.stringValue == variable }, "\(variable) is not set in the Deployment")
            #expect(entry["value"] == nil, "\(variable) must not be a literal")
            let secret = try #require(entry.at("valueFrom.secretKeyRef.name")?.stringValue, "\(variable)")
            let key = try #require(entry.at("valueFrom.secretKeyRef.key")?.stringValue, "\(variable)")
            #expect(exampleKeys(secret).contains(key), "secret.example.yaml shows \(secret).\(key)")
        }
        for secret in secretExamples {
            for (key, value) in secret["stringData"]?.objectValue ?? [:] {
                #expect(value == .string(""), "secret.example.yaml holds keys only: \(key) has a value")
            }
        }
    }

    @Test("the metrics Service, ServiceMonitor and scrape annotations point at the code's port and metrics path")
    func scraping() throws {
        let port = WorkerConfigs.defaultObservabilityPort
        let service = try YAMLDocuments.resource(kind: "Service", named: "provisioner-metrics")
        #expect(service.at("spec.selector") == Self.podLabels)
        #expect(service.at("spec.publishNotReadyAddresses") == .bool(true))
        let servicePort = try #require(service.at("spec.ports.0"))
        #expect(servicePort["port"]?.int64Value == Int64(port))
        #expect(try resolve(servicePort["targetPort"]) == port)
        let pod = try deployment().at("spec.template.metadata.annotations")
        for annotations in [service.at("metadata.annotations"), pod] {
            #expect(annotations?["prometheus.io/scrape"] == .string("true"))
            #expect(annotations?["prometheus.io/port"] == .string(String(port)))
            #expect(annotations?["prometheus.io/path"]?.stringValue == ObservabilityServer.metricsPath)
        }
        let monitor = try YAMLDocuments.resource(kind: "ServiceMonitor")
        #expect(monitor.at("spec.selector.matchLabels") == Self.podLabels)
        #expect(monitor.at("spec.endpoints.0.port")?.stringValue == servicePort["name"]?.stringValue)
        #expect(monitor.at("spec.endpoints.0.path")?.stringValue == ObservabilityServer.metricsPath)
    }

    @Test("the PodDisruptionBudget selects the worker pods and lets one go at a time")
    func disruptionBudget() throws {
        let budget = try YAMLDocuments.resource(kind: "PodDisruptionBudget")
        #expect(budget.at("spec.selector.matchLabels") == Self.podLabels)
        #expect(budget.at("spec.maxUnavailable") == .integer(1))
    }

    @Test("KEDA scales the Deployment on the lag of the config's group on its requests topic, up to the requests partitions")
    func autoscaling() throws {
        let configuration = try WorkerConfigs.configMap()
        let scaled = try YAMLDocuments.resource(kind: "ScaledObject")
        #expect(scaled.at("spec.scaleTargetRef.name")?.stringValue == (try deployment()).at("metadata.name")?.stringValue)
        let trigger = try #require(scaled.at("spec.triggers")?.arrayValue?.first { $0["type"]?.stringValue == "kafka" })
        let metadata = try #require(trigger["metadata"]?.objectValue)
        #expect(metadata["topic"]?.stringValue == configuration.topics.requests)
        #expect(metadata["consumerGroup"]?.stringValue == configuration.groupID)
        #expect(metadata["bootstrapServers"]?.stringValue == configuration.kafka["bootstrap.servers"])
        #expect(metadata["offsetResetPolicy"]?.stringValue == configuration.consumerProperties["auto.offset.reset"])
        #expect(metadata.values.allSatisfy { $0.stringValue != nil }, "KEDA trigger metadata values must be strings (quote numbers and Booleans)")
        let threshold = try #require(metadata["lagThreshold"]?.stringValue.flatMap { Int($0) })
        #expect(threshold > 0 && threshold <= configuration.scheduler.globalLimit)
        let partitions = try #require(TopicLayout.parse(json: try Repository.text("Config/topics.json"))[.requests]?.partitions)
        let maximum = try #require(scaled.at("spec.maxReplicaCount")?.int64Value)
        let minimum = try #require(scaled.at("spec.minReplicaCount")?.int64Value)
        #expect(maximum <= Int64(partitions), "more workers than partitions would sit idle")
        #expect(minimum >= 2 && minimum <= maximum)
        // The TriggerAuthentication reads keys that the example Secret shows.
        let authentication = try YAMLDocuments.resource(kind: "TriggerAuthentication", named: trigger.at("authenticationRef.name")?.stringValue)
        let secrets = try YAMLDocuments.load("Deploy/kubernetes/secret.example.yaml")
        for reference in authentication.at("spec.secretTargetRef")?.arrayValue ?? [] {
            let secret = secrets.first { $0.at("metadata.name") == reference["name"] }
            #expect(secret?["stringData"]?[reference["key"]?.stringValue ?? ""] != nil, "\(reference)")
        }
    }

    @Test("the NetworkPolicy allows scraping in, and only DNS, the Kafka port and HTTPS out")
    func networkPolicy() throws {
        let configuration = try WorkerConfigs.configMap()
        let policy = try YAMLDocuments.resource(kind: "NetworkPolicy")
        #expect(policy.at("spec.podSelector.matchLabels") == Self.podLabels)
        #expect(Set(policy.at("spec.policyTypes")?.arrayValue?.compactMap(\.stringValue) ?? []) == ["Ingress", "Egress"])
        let ingressPorts = (policy.at("spec.ingress")?.arrayValue ?? []).flatMap { $0["ports"]?.arrayValue ?? [] }
        #expect(ingressPorts.map { $0["port"]?.int64Value } == [Int64(WorkerConfigs.defaultObservabilityPort)])
        let egress = (policy.at("spec.egress")?.arrayValue ?? []).flatMap { $0["ports"]?.arrayValue ?? [] }
        let allowed = Set(egress.compactMap { port in port["port"]?.int64Value.map { "\(port["protocol"]?.stringValue ?? "TCP")/\($0)" } })
        let kafkaPorts = Set((configuration.kafka["bootstrap.servers"] ?? "").split(separator: ",").compactMap {
            WorkerConfigs.port(String($0)).map { "TCP/\($0)" }
        })
        #expect(!kafkaPorts.isEmpty)
        #expect(allowed == Set(["UDP/53", "TCP/53", "TCP/443"]).union(kafkaPorts), "\(allowed)")
        #expect(configuration.programs.values.allSatisfy { $0.baseURL.hasPrefix("https://") && !$0.baseURL.dropFirst(8).contains(":") },
                "issuers are reached on 443, the only HTTPS port the policy opens")
    }

    @Test("the Strimzi KafkaTopics are topics.json under the config's topic names")
    func strimziTopics() throws {
        let configuration = try WorkerConfigs.configMap()
        let layout = try TopicLayout.parse(json: try Repository.text("Config/topics.json"))
        let topics = try YAMLDocuments.load("Deploy/kubernetes/kafkatopics.yaml")
        #expect(topics.count == TopicRole.allCases.count)
        for role in TopicRole.allCases {
            let name = role.name(in: configuration.topics)
            let resource = try #require(topics.first { $0.at("spec.topicName")?.stringValue == name }, "KafkaTopic for \(name)")
            let desired = try #require(layout[role])
            #expect(resource["kind"] == .string("KafkaTopic"))
            #expect(resource.at("spec.partitions")?.int64Value == Int64(desired.partitions), "\(name)")
            #expect(resource.at("spec.replicas")?.int64Value == Int64(desired.replicationFactor), "\(name)")
            let config = (resource.at("spec")?["config"]?.objectValue ?? [:]).mapValues { $0.scalarText ?? "" }
            #expect(config == desired.configs, "\(name)")
            #expect(resource.at("metadata.labels")?["strimzi.io/cluster"]?.stringValue?.isEmpty == false)
        }
    }
}

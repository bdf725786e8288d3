import Foundation
import Kafka
import Pipeline

/// `provisioner topics apply`: creates or updates the pipeline topics on a cluster.
enum TopicsCommand: Command {
    static let name = "topics"
    static let summary = "creates or updates the pipeline topics on a cluster (plan, then apply)"
    static let help = """
        usage: provisioner topics apply --config FILE [--spec TOPICS.json] [--dry-run] [--json] [--timeout-ms N]

        Makes the cluster's pipeline topics match a layout. Connection and security (bootstrap.servers,
        SASL/SSL properties under 'kafka', with PROVISIONER_KAFKA__… overrides such as
        PROVISIONER_KAFKA__SASL_PASSWORD) and the topic names (under 'topics') come from the worker
        configuration FILE. Partitions, replication factor and topic configs come from TOPICS.json,
        or, without --spec, from the built-in production layout (the same as Config/topics.json).

        It lists the cluster's topics (Metadata), reads their configs (DescribeConfigs), and plans:
          create            a topic the cluster lacks (partitions, replication factor, configs)
          raise partitions  a topic with fewer partitions than the layout; never lowers a count, and
                            keeps markers at the partition count of requests (they are co-partitioned)
          update configs    configs that differ from the layout (other configs of the topic are kept)
        A replication factor that differs is reported, not changed (that is a partition reassignment).
        Then it applies the plan (CreateTopics, CreatePartitions, AlterConfigs) and prints what each
        step did. Running it again finds nothing to do.

        --dry-run prints the plan and changes nothing. If the cluster does not answer DescribeConfigs,
        the dry-run plan lists every layout config of an existing topic as 'update configs' with the
        current value 'unknown'; without --dry-run the command stops there, changes nothing, and fails.

        librdkafka's mock cluster ('provisioner broker', the demo and tests) serves Metadata but does
        not answer CreateTopics, CreatePartitions, DescribeConfigs or AlterConfigs. Against it only
        --dry-run is useful (the plan from Metadata); apply fails after --timeout-ms with a one-line
        reason saying the cluster did not answer, and nothing is changed.

        options:
          --config FILE     worker configuration (Kafka connection and topic names)
          --spec FILE       topic layout (default: built in, equal to Config/topics.json)
          --dry-run         print the plan, change nothing
          --json            print the plan (and results) as JSON
          --timeout-ms N    bound on each admin request, 100 to 600000 (default 30000)

        exit status: 0 plan printed (dry run) or every step applied; 1 a step failed or the cluster did
        not answer; 2 bad arguments.
        """
    static let switchNames: Set<String> = ["dry-run", "json"]

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        guard let action = arguments.popPositional() else { throw UsageError("missing action: 'topics apply --config FILE'") }
        guard action == "apply" else { throw UsageError("unknown action '\(action)' (only 'apply')") }
        let configPath = try arguments.requiredOption("config")
        let specPath = arguments.option("spec")
        let dryRun = arguments.flag("dry-run")
        let json = arguments.flag("json")
        let timeoutMs = Int32(try arguments.integer("timeout-ms", default: 30_000, in: 100...600_000))
        try arguments.rejectUnknown()
        if let unexpected = arguments.popPositional() { throw UsageError("unexpected argument '\(unexpected)'") }

        let configuration = try ConfigurationFile.load(path: configPath, environment: ProcessInfo.processInfo.environment,
                                                       strict: false, requireSecrets: false)
        let layout = try ConfigurationFile.layout(path: specPath)
        var properties = configuration.kafka
        properties["client.id"] = properties["client.id"] ?? "provisioner-topics"
        let admin: KafkaAdmin
        do {
            admin = try KafkaAdmin(configuration: properties)
        } catch {
            throw CommandFailure("could not create a Kafka admin client from \(configPath) 'kafka': \(error.message)")
        }
        defer { admin.close() }

        let existing: [KafkaTopicMetadata]
        do {
            existing = try admin.listTopics(timeoutMs: timeoutMs)
        } catch {
            throw CommandFailure("could not list the cluster's topics: \(error.message)")
        }
        let present = Set(existing.map(\.name))
        let names = TopicRole.allCases.map { $0.name(in: configuration.topics) }.filter { present.contains($0) }
        var configs: [String: [String: String]]?
        var configsProblem: KafkaError?
        do {
            configs = try admin.describeTopicConfigs(names, timeoutMs: timeoutMs)
        } catch {
            configsProblem = error
        }

        let plan: TopicPlan
        do {
            plan = try TopicPlan.make(layout: layout, names: configuration.topics, existing: existing, configs: configs)
        } catch {
            throw CommandFailure("\(configPath): " + error.issues.map { "\($0.keyPath): \($0.message)" }.joined(separator: "; "))
        }
        let source = TopicPlanOutput.Source(bootstrapServers: properties["bootstrap.servers"] ?? "", spec: specPath ?? "built-in",
                                            dryRun: dryRun,
                                            configsProblem: configsProblem.map { describe($0, request: "DescribeConfigs", timeoutMs: timeoutMs) })

        if dryRun {
            print(json ? TopicPlanOutput.json(plan, source: source, report: nil) : TopicPlanOutput.table(plan, source: source))
            return 0
        }
        if let configsProblem {
            if json { print(TopicPlanOutput.json(plan, source: source, report: nil)) }
            throw CommandFailure("nothing changed: the topics' configs cannot be compared: "
                                 + describe(configsProblem, request: "DescribeConfigs", timeoutMs: timeoutMs))
        }
        guard !plan.isEmpty else {
            print(json ? TopicPlanOutput.json(plan, source: source, report: TopicApplyReport(outcomes: []))
                       : TopicPlanOutput.table(plan, source: source))
            return 0
        }
        let report = TopicPlanExecutor.apply(plan, admin: admin, timeoutMs: timeoutMs)
        print(json ? TopicPlanOutput.json(plan, source: source, report: report) : TopicPlanOutput.results(report, source: source))
        if let stopped = report.stoppedBy {
            throw CommandFailure("stopped after \(report.appliedCount) of \(report.outcomes.count) step(s): "
                                 + describe(stopped, request: report.stoppedRequest ?? "an admin request", timeoutMs: timeoutMs))
        }
        guard report.isComplete else {
            throw CommandFailure("\(report.outcomes.count - report.appliedCount) of \(report.outcomes.count) step(s) failed (see above); fix and run again")
        }
        return 0
    }

    /// One line on an admin request that failed as a whole; a timeout is what librdkafka's mock
    /// cluster always gives, so it says so.
    static func describe(_ error: KafkaError, request: String, timeoutMs: Int32) -> String {
        guard error.code == .timedOut else {
            return "\(request) failed: " + error.message.split(separator: "\n").joined(separator: " ")
        }
        return """
            the cluster did not answer \(request) within \(timeoutMs) ms (no controller answered); librdkafka's mock \
            cluster (provisioner broker) never answers admin requests, so against it only --dry-run works
            """
    }
}

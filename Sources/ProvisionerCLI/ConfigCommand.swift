import Foundation
import Observability
import Pipeline

/// `provisioner config check --config FILE`: validates a worker configuration.
enum ConfigCommand: Command {
    static let name = "config"
    static let summary = "validates a configuration file"
    static let help = """
        usage: provisioner config check --config FILE [--topics TOPICS.json]

        Reads FILE with the PROVISIONER_… environment overrides applied, exactly as the worker would,
        and reports every problem with its key path: unknown keys, wrong types, out-of-range values,
        missing required keys, and secrets named by *_env keys but absent from the environment
        (reported by variable name, never by value). Exits 0 when the configuration is usable, 1 if not.
        Warns about request-signing keys (request_signing.keys), replay keys (dlq.replay_keys) and
        audit pseudonym keys (audit.pseudonym_keys) retired or retiring within 7 days.
        Also warns when the markers topic's retention in the topic layout (--topics, default the
        built-in production layout, equal to Config/topics.json) is shorter than
        duplicates.horizon_seconds.
        """

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        guard let action = arguments.popPositional() else { throw UsageError("missing action: 'config check --config FILE'") }
        guard action == "check" else { throw UsageError("unknown action '\(action)' (only 'check')") }
        let path = try arguments.requiredOption("config")
        let topicsPath = arguments.option("topics")
        try arguments.rejectUnknown()
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure("cannot read config file \(path)")
        }
        let layout = try ConfigurationFile.layout(path: topicsPath)
        do {
            let (configuration, issues) = try WorkerConfiguration.load(
                json: String(decoding: data, as: UTF8.self), environment: ProcessInfo.processInfo.environment,
                workerID: "config-check", strict: true)
            for issue in issues { printError("\(path): \(issue)") }
            for issue in configuration.keyRetirements(nowMs: Timestamps.nowMs()) { printError("\(path): \(issue)") }
            for issue in layout.horizonIssues(horizonMs: configuration.duplicateHorizonMs) {
                printError("\(topicsPath ?? "built-in topic layout"): \(issue)")
            }
            let programs = configuration.programs.keys.sorted().joined(separator: ", ")
            writeStandardOutput("\(path): ok (\(configuration.programs.count) programs: \(programs); group \(configuration.groupID); requests topic \(configuration.topics.requests))\n")
            return 0
        } catch {
            for issue in error.issues { printError("\(path): \(issue)") }
            printError("provisioner config: \(path) has \(error.issues.filter { $0.severity == .error }.count) error(s)")
            return 1
        }
    }
}

import Contract
import Foundation
import Harness
import TestSupport

/// `provisioner worker --config FILE --exit-with-parent` as a child process of the test, pointed at
/// a rig's Kafka and simulator (`StackEndpoints`). Its JSON log lines (stderr, level `info` or lower) tell which
/// requests partitions it owns.
final class ChildWorker: Sendable {
    let name: String
    let process: ChildProcess

    /// Starts a worker of `groupID` pointed at `endpoints` (the demo configuration with their
    /// addresses), with their environment plus `environment`.
    init(endpoints: StackEndpoints, groupID: String, name: String, directory: URL,
         logLevel: String = "info", environment extra: [String: String] = [:]) throws {
        let configPath = directory.appendingPathComponent("\(name).json").path
        try endpoints.configurationFileText(groupID: groupID).write(toFile: configPath, atomically: true, encoding: .utf8)
        var environment = endpoints.environment
        environment["PROVISIONER_WORKER_ID"] = name
        environment["PROVISIONER_LOG__LEVEL"] = logLevel
        environment.merge(extra) { _, new in new }
        self.name = name
        process = try ChildProcess(executable: try BuiltProducts.provisionerPath,
                                   arguments: ["worker", "--config", configPath, "--exit-with-parent"], environment: environment)
    }

    /// Whether the process still runs.
    var isRunning: Bool { process.termination == nil }

    /// Its stderr lines parsed as JSON objects (other lines are skipped).
    var logEntries: [JSONValue] {
        process.standardErrorLines.compactMap { line in
            guard line.hasPrefix("{"), let value = try? JSONParser(maxDepth: 8, maxBytes: 1 << 20).parse(Array(line.utf8)),
                  value.objectValue != nil else { return nil }
            return value
        }
    }

    /// Requests partitions it owns now.
    var ownedPartitions: Set<Int32> { ChildWorkerLog(process: process).ownedPartitions }

    /// Waits until `workers` together own every one of `partitions` partitions, each owns at least
    /// one and no partition is owned twice.
    static func waitForGroup(_ workers: [ChildWorker], partitions: Int, timeoutMs: Int64 = 60_000) async -> Bool {
        await Waiting.until(timeoutMs: timeoutMs) {
            let owned = workers.map(\.ownedPartitions)
            let total = owned.reduce(0) { $0 + $1.count }
            return workers.allSatisfy(\.isRunning) && owned.allSatisfy { !$0.isEmpty } && total == partitions
                && Set(owned.flatMap { $0 }).count == partitions
        }
    }

    /// What each of `workers` owns and its last partition events and warnings, for a failed
    /// `waitForGroup`'s message.
    static func describeGroup(_ workers: [ChildWorker]) -> String {
        workers.map { worker in
            let events = worker.logEntries.filter { entry in
                let message = entry["msg"]?.stringValue ?? ""
                return message.hasPrefix("partitions") || entry["level"]?.stringValue == "warning" || entry["level"]?.stringValue == "error"
            }.suffix(12)
            let shown = (events.isEmpty ? worker.logEntries.suffix(15) : events).map { entry in
                [entry["ts"]?.stringValue, entry["msg"]?.stringValue, entry["partitions"]?.stringValue, entry["error"]?.stringValue]
                    .compactMap { $0 }.joined(separator: " ")
            }
            return "\(worker.name) running=\(worker.isRunning) owns=\(worker.ownedPartitions.sorted()): \(shown.joined(separator: " | "))"
        }.joined(separator: "\n")
    }
}

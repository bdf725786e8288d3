import Foundation
import TestSupport

/// Runs the built `provisioner` binary as an operator would (`provisioner dlq ... --bootstrap B`)
/// and returns everything it printed. A small shell wrapper prints the exit status on both streams
/// after the child has exited, so waiting for that line means every earlier line was read.
struct OperatorTool: Sendable {
    /// What one invocation printed and how it ended.
    struct Run: Sendable, CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        var standardOutput: [String]
        var standardError: [String]

        /// Standard output as one text.
        var output: String { standardOutput.joined(separator: "\n") }
        /// Both streams, for failure messages and leak checks.
        var everything: String { (standardOutput + standardError).joined(separator: "\n") }

        var description: String {
            "provisioner \(arguments.joined(separator: " ")) → exit \(status)\nstdout:\n\(output)\nstderr:\n\(standardError.joined(separator: "\n"))"
        }
    }

    /// Bootstrap servers of the stack.
    var bootstrap: String
    /// The replay key (`RecoveryRig.replayKey`): `dlq replay` gets it in `RecoveryRig.replayKeyVariable`
    /// and `--sign-env` naming that variable; nil runs the tool without one.
    var replayKey: String? = nil
    /// A worker configuration file to give `--config` instead of `--bootstrap` (its replay keys
    /// then come from it, their variables from `environment`).
    var configPath: String? = nil
    /// Extra environment of the tool.
    var environment: [String: String] = [:]

    private static let marker = "__operator_tool_exit_status="

    /// Runs `provisioner dlq <arguments> --bootstrap B` (or `--config FILE`).
    func dlq(_ arguments: [String], timeout: Duration = .seconds(90)) async throws -> Run {
        let signing = replayKey != nil && arguments.first == "replay" ? ["--sign-env", RecoveryRig.replayKeyVariable] : []
        let all = ["dlq"] + arguments + signing + (configPath.map { ["--config", $0] } ?? ["--bootstrap", bootstrap])
        let script = "\"$0\" \"$@\"; status=$?; echo \(Self.marker)$status; echo \(Self.marker)$status >&2"
        let environment = (replayKey.map { [RecoveryRig.replayKeyVariable: $0] } ?? [:]).merging(self.environment) { $1 }
        let process = try ChildProcess(executable: "/bin/sh", arguments: ["-c", script, try BuiltProducts.provisionerPath] + all,
                                       environment: environment)
        let last = try await process.waitForLine(prefix: Self.marker, in: .standardOutput, timeout: timeout)
        try await process.waitForLine(prefix: Self.marker, in: .standardError, timeout: timeout)
        try await process.waitForExit(timeout: timeout)
        let status = Int32(last.dropFirst(Self.marker.count)) ?? -1
        return Run(arguments: all.filter { $0 != bootstrap }, status: status,
                   standardOutput: process.standardOutputLines.filter { !$0.hasPrefix(Self.marker) },
                   standardError: process.standardErrorLines.filter { !$0.hasPrefix(Self.marker) })
    }
}

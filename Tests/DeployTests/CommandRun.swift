import Foundation
import TestSupport

/// One finished run of an executable: exit status and complete output (collected through files, so
/// nothing is lost to a pipe still draining when the process is reaped).
struct CommandRun: CustomStringConvertible {
    /// The exit status (128 + N when signal N ended it).
    var status: Int32
    /// Standard output.
    var standardOutput: String
    /// Standard error.
    var standardError: String

    /// Non-empty lines of standard error.
    var errorLines: [String] { standardError.split(separator: "\n").map(String.init) }

    var description: String { "exit \(status)\nstdout:\n\(standardOutput)\nstderr:\n\(standardError)" }

    struct Failure: Error, Sendable, CustomStringConvertible {
        var description: String
    }

    /// Runs `executable` with `arguments`. The child gets this process's environment without any
    /// `PROVISIONER_…` variable (so a developer's shell cannot change the outcome), plus `environment`.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                    timeout: Duration = .seconds(60)) throws -> CommandRun {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UniqueName.make("deploy-run"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outputURL = directory.appendingPathComponent("stdout")
        let errorURL = directory.appendingPathComponent("stderr")
        guard FileManager.default.createFile(atPath: outputURL.path, contents: nil),
              FileManager.default.createFile(atPath: errorURL.path, contents: nil) else {
            throw Failure(description: "could not create output files in \(directory.path)")
        }
        let output = try FileHandle(forWritingTo: outputURL)
        let error = try FileHandle(forWritingTo: errorURL)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var inherited = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PROVISIONER_") }
        inherited.merge(environment) { _, new in new }
        process.environment = inherited
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                process.terminate()
                process.waitUntilExit()
                throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        try output.close()
        try error.close()
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return CommandRun(status: status,
                          standardOutput: try String(contentsOf: outputURL, encoding: .utf8),
                          standardError: try String(contentsOf: errorURL, encoding: .utf8))
    }

    /// Runs the built `provisioner` with `arguments`.
    static func provisioner(_ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(60)) throws -> CommandRun {
        try run(try BuiltProducts.provisionerPath, arguments, environment: environment, timeout: timeout)
    }
}

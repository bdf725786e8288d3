import Foundation
import Pipeline

/// Reads a worker configuration file for a command, printing warnings and turning errors into a
/// one-line `CommandFailure` that names every bad key.
enum ConfigurationFile {
    static func load(path: String, environment: [String: String], strict: Bool, requireSecrets: Bool = true,
                     requirePrograms: Bool = true) throws -> WorkerConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure("cannot read config file \(path)")
        }
        let hostname = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "worker"
        do {
            let (configuration, issues) = try WorkerConfiguration.load(
                json: String(decoding: data, as: UTF8.self), environment: environment,
                workerID: "\(hostname)-\(ProcessInfo.processInfo.processIdentifier)", strict: strict,
                requireSecrets: requireSecrets, requirePrograms: requirePrograms)
            for issue in issues { printError("provisioner: \(path): \(issue)") }
            return configuration
        } catch {
            throw failure(path, error.issues)
        }
    }

    /// Reads a topic layout file for a command (nil: the built-in production layout), its errors
    /// turned into one `CommandFailure` like a configuration's.
    static func layout(path: String?) throws -> TopicLayout {
        guard let path else { return .production }
        guard let data = FileManager.default.contents(atPath: path) else { throw CommandFailure("cannot read topic layout \(path)") }
        do {
            return try TopicLayout.parse(json: String(decoding: data, as: UTF8.self))
        } catch {
            throw failure(path, error.issues)
        }
    }

    /// `path: key: message; …` for every error among `issues`.
    private static func failure(_ path: String, _ issues: [ConfigurationIssue]) -> CommandFailure {
        CommandFailure("\(path): " + issues.filter { $0.severity == .error }.map { "\($0.keyPath): \($0.message)" }.joined(separator: "; "))
    }
}

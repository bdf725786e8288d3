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
            throw CommandFailure("\(path): " + error.issues.filter { $0.severity == .error }.map { "\($0.keyPath): \($0.message)" }.joined(separator: "; "))
        }
    }
}

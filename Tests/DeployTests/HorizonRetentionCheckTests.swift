import Foundation
import Pipeline
import Testing

/// `config check` warns when the markers topic keeps less than the duplicate horizon.
@Suite("config check: markers retention against the duplicate horizon", .timeLimit(.minutes(5)))
struct HorizonRetentionCheckTests {
    @Test("a topic layout whose markers retention is shorter than duplicates.horizon_seconds: a warning naming both, exit 0")
    func warnsOnShortRetention() throws {
        let file = "Config/worker.json"
        let configuration = try WorkerConfigs.load(try Repository.text(file))
        #expect(configuration.duplicateHorizonMs == 86_400_000, "production keeps a day")
        let secrets = WorkerConfigs.dummySecrets(for: configuration)
        let layout = try Repository.text("Config/topics.json")
        let short = layout.replacingOccurrences(of: "\"172800000\"", with: "\"3600000\"")
        #expect(short != layout, "Config/topics.json keeps markers two days")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("topics-\(UUID().uuidString).json").path
        try short.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let warned = try CommandRun.provisioner(["config", "check", "--config", Repository.path(file), "--topics", path], environment: secrets)
        #expect(warned.status == 0, "\(warned)")
        #expect(warned.standardError.contains("warning: topics.markers.configs.retention.ms: is 3600000 ms, shorter than duplicates.horizon_seconds (86400 s)"),
                "\(warned)")
        let fine = try CommandRun.provisioner(["config", "check", "--config", Repository.path(file), "--topics", Repository.path("Config/topics.json")],
                                              environment: secrets)
        #expect(fine.status == 0 && fine.standardError.isEmpty, "\(fine)")
    }
}

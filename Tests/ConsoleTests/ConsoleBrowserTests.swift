import Contract
import Foundation
import Testing
import TestSupport

/// The console in a real browser: headless Chromium driven by Selenium (Tests/Browser/
/// console_browser_test.py) against a real worker, broker and simulator, with a steady load.
/// Screenshots go to CONSOLE_SCREENSHOT_DIR (scripts/screenshots: docs/screenshots), else a
/// temporary directory.
@Suite("Console in headless Chromium (Selenium)", .serialized, .timeLimit(.minutes(10)))
struct ConsoleBrowserTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Browser/console_browser_test.py").path

    @Test("log in, overview moves under load, filter, dry run, replay at a rate, results on Kafka, trace, viewer and CSRF refusals, no canary")
    func browser() async throws {
        let rig = try ConsoleStackRig(replayableCount: 4, name: "console-browser")
        defer { rig.stop() }
        #expect(rig.waitForWorkerDeadLetters())
        rig.startLoad(intervalMs: 100)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UniqueName.make("console-browser"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let screenshots = ProcessInfo.processInfo.environment["CONSOLE_SCREENSHOT_DIR"] ?? directory.appendingPathComponent("screenshots").path
        let config: [String: JSONValue] = [
            "url": .string(rig.baseURL), "alice_token": .string(ConsoleStackRig.aliceToken), "viewer_token": .string(ConsoleStackRig.viewerToken),
            "canaries": .array(rig.canaries.map { .string($0) }), "bootstrap": .string(rig.stack.bootstrapServers),
            "results_topic": .string(rig.stack.topics.results), "replayable_ids": .array(rig.replayable.map { .string($0.requestID) }),
            "group": .string(rig.group), "screenshots": .string(screenshots),
        ]
        let configPath = directory.appendingPathComponent("browser.json").path
        try Data(JSONWriter.encode(.object(config))).write(to: URL(fileURLWithPath: configPath))
        let output = directory.appendingPathComponent("out.txt")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["timeout", "--kill-after=10", "300", "python3", Self.script, configPath]
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                process.waitUntilExit()
                continuation.resume()
            }
        }
        let text = String(decoding: try Data(contentsOf: output), as: UTF8.self)
        #expect(process.terminationStatus == 0, "console_browser_test.py exited \(process.terminationStatus):\n\(text.suffix(4_000))")
        #expect(text.contains("console browser test: 0 check(s) failed"), "\(text.suffix(2_000))")
        for name in ["console-login", "console-overview", "console-lag", "console-dead-letters", "console-dead-letter-detail",
                     "console-replay-preview", "console-replay-progress", "console-trace"] {
            let png = try? Data(contentsOf: URL(fileURLWithPath: screenshots).appendingPathComponent(name + ".png"))
            #expect(png.map { $0.starts(with: [0x89, 0x50, 0x4E, 0x47]) } == true, "screenshot \(name).png")
        }
        let leaks = rig.logs.renderedLines.flatMap { rig.leaks(in: $0) }
        #expect(leaks.isEmpty, "the console's log holds no canary")
    }
}

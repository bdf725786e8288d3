import Contract
import Foundation
import Harness
import HTTP
import Testing
import TestSupport

/// `provisioner console` as operators run it: `hash-token` output in the configuration, the
/// process serving on loopback, a login with the token, SIGTERM ending it with status 0.
@Suite("Console: the provisioner console command", .serialized, .timeLimit(.minutes(5)))
struct ConsoleCommandTests {
    static func run(_ arguments: [String], input: String? = nil, environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try BuiltProducts.provisionerPath)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let output = Pipe(), errors = Pipe(), stdin = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        _ = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("hash-token refuses short tokens and prints a hash that does not contain the token")
    func hashToken() throws {
        #expect(try Self.run(["console", "hash-token"], input: "short\n").status == 1)
        let token = "ops-" + Crypto.hex(Crypto.randomBytes(12))
        let (status, output) = try Self.run(["console", "hash-token", "--token-env", "CONSOLE_TOKEN", "--iterations", "10000"],
                                            environment: ["CONSOLE_TOKEN": token])
        #expect(status == 0 && output.hasPrefix("pbkdf2-sha256$10000$") && !output.contains(token))
    }

    @Test("the process serves on loopback with the hashed token, refuses others, and stops on SIGTERM")
    func serves() async throws {
        let stack = try EmbeddedStack(brokers: 1, partitions: 2)
        defer { stack.stop() }
        let token = "ops-" + Crypto.hex(Crypto.randomBytes(12))
        let hash = try Self.run(["console", "hash-token", "--iterations", "10000"], input: token + "\n").output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UniqueName.make("console-cli"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("console.json").path
        let config = """
            {"kafka": {"bootstrap.servers": "\(stack.bootstrapServers)"}, "group_id": "console-cli",
             "console": {"listen": "127.0.0.1:0", "tokens": [{"name": "ops", "role": "viewer", "hash": "\(hash)"}]}}
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: path))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try BuiltProducts.provisionerPath)
        process.arguments = ["console", "--config", path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        var firstLine = Data()
        while !firstLine.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            firstLine.append(chunk)
        }
        let line = String(decoding: firstLine, as: UTF8.self)
        #expect(line.hasPrefix("console=http://127.0.0.1:"), "\(line)")
        let base = String(line.dropFirst("console=".count).prefix { $0 != "\n" }).trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        let browser = ConsoleClient(base: base)
        #expect(try await browser.login("ops-" + Crypto.hex(Crypto.randomBytes(12))) == 401)
        #expect(try await browser.login(token) == 303)
        let lag = try await browser.get("/lag")
        #expect(lag.status == 200 && lag.body.contains("Lag of group console-cli"))
        #expect(!browser.seen.contains { $0.contains(token) || $0.contains(hash) })
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}

import Contract
import Foundation
import Harness
import Observability
import Pipeline
import TestSupport
import Testing

/// A backend written with independent libraries (Python confluent-kafka and jwcrypto) talks to
/// the worker through the embedded broker: it produces a request with its own reply key, reads
/// the result, and decrypts the payload.
@Suite("Interop with a Python backend (confluent-kafka, jwcrypto)", .serialized, .timeLimit(.minutes(10)))
struct PythonBackendInteropTests {
    @Test func pythonBackendGetsAnEncryptedPayloadItCanDecrypt() throws {
        let stack = try EmbeddedStack(partitions: 3)
        defer { stack.stop() }
        try stack.startWorker(try stack.configuration(groupID: "python-\(UUID().uuidString)"),
                              logger: Logger(label: "worker", minimumLevel: .error, handler: CapturingLogHandler()))
        #expect(stack.waitForGroup())
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Interop/python_backend.py").path
        let requestID = "py-\(UUID().uuidString.prefix(8))"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, stack.bootstrapServers, "demo-imprint", "pm_python_1", requestID]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(String(decoding: data, as: UTF8.self))")
        let line = try #require(String(decoding: data, as: UTF8.self).split(separator: "\n").last)
        let document = try JSONParser().parse(String(line))
        #expect(document["status"]?.stringValue == "provisioned")
        #expect(document["next_action"]?.stringValue == "add_to_wallet")
        #expect(document["protected"]?["alg"]?.stringValue == "ECDH-ES")
        #expect(document["protected"]?["enc"]?.stringValue == "A256GCM")
        #expect(document["protected"]?["epk"]?["crv"]?.stringValue == "P-256")
        #expect(document["payload"]?["opaque_payment_card"]?.stringValue?.isEmpty == false)
        #expect(document["payload"]?["network"]?.stringValue == "VISA")
        #expect(document["traceparent"]?.stringValue == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                "the worker propagates the request's trace context to the result")
    }
}

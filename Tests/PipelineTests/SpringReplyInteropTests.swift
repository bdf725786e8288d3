import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import TestSupport
import Testing

/// Spring Kafka request-reply against the worker, from independent libraries: two Python
/// requesters (confluent-kafka, jwcrypto) each own one partition of a reply topic, send requests
/// with `kafka_replyTopic` / `kafka_replyPartition` / `kafka_correlationId`, and must see exactly
/// their own answers there (while other traffic, routed elsewhere or not at all, flows too).
@Suite("Interop: Spring-style request-reply from Python (confluent-kafka, jwcrypto)", .serialized, .timeLimit(.minutes(10)))
struct SpringReplyInteropTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/spring_requester.py").path

    /// Runs one requester and returns its summary line.
    static func requester(_ bootstrap: String, partition: Int32, count: Int, prefix: String) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, bootstrap, "demo-imprint", "backend.replies", String(partition), String(count), prefix]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        return (process, output)
    }

    @Test func twoSpringRequestersEachSeeOnlyTheirOwnAnswers() throws {
        let stack = try EmbeddedStack(partitions: 3)
        defer { stack.stop() }
        try stack.cluster.createTopic("backend.replies", partitions: 3, replicationFactor: 1)
        try stack.startWorker(try stack.configuration(groupID: "spring-\(UUID().uuidString)") { $0.replyTopics = ["backend.replies"] },
                              logger: Logger(label: "worker", minimumLevel: .error, handler: CapturingLogHandler()))
        #expect(stack.waitForGroup())
        // Other traffic: requests routed to partition 2 and requests without routing.
        let factory = try RequestFactory(devices: 2)
        let producer = try KafkaProducer(configuration: stack.producerProperties)
        defer { producer.close(timeoutMs: 5_000) }
        for index in 0..<10 {
            let request = try factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: "pm_noise_\(UUID().uuidString.prefix(8))")
            let headers = index.isMultiple(of: 2)
                ? ReplyRoute(topic: "backend.replies", partition: 2, correlationID: [UInt8(index)]).requestHeaders.map { KafkaHeader(key: $0.name, value: $0.value) }
                : []
            try producer.send(KafkaOutgoingMessage(topic: stack.topics.requests, key: request.key, value: request.value, headers: headers)) { _ in }
        }
        let run = UUID().uuidString.prefix(6)
        let first = try Self.requester(stack.bootstrapServers, partition: 0, count: 20, prefix: "spring-a-\(run)")
        let second = try Self.requester(stack.bootstrapServers, partition: 1, count: 20, prefix: "spring-b-\(run)")
        for (name, (process, pipe)) in [("partition 0", first), ("partition 1", second)] {
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let text = String(decoding: data, as: UTF8.self)
            #expect(process.terminationStatus == 0, "\(name): \(text)")
            let line = try #require(text.split(separator: "\n").last, "\(name): no output")
            let summary = try JSONParser().parse(String(line))
            #expect(summary["finals"]?.int64Value == 20, "\(name): \(line)")
            #expect(summary["foreign"]?.int64Value == 0, "\(name) read only its own answers: \(line)")
            #expect(summary["wrong_partition"]?.int64Value == 0, "\(name): \(line)")
            #expect(summary["duplicates"]?.int64Value == 0, "\(name): \(line)")
            #expect(summary["statuses"]?["provisioned"]?.int64Value == 20, "\(name): \(line)")
            #expect(summary["decrypted"]?.int64Value == 20, "\(name) decrypted every payload with its own key: \(line)")
        }
    }
}

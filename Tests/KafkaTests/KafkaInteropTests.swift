import Contract
import Foundation
import Kafka
import Pipeline
import Testing
import TestSupport

/// Interoperability with an independent client (kcat) through `provisioner broker` in another process.
@Suite("Interop with kcat through provisioner broker", .timeLimit(.minutes(5)))
struct KafkaInteropTests {
    @Test("kcat produces with headers; our consumer reads keys, values and headers")
    func kcatToBinding() async throws {
        let broker = try await EmbeddedBrokerProcess.start(brokers: 3, partitions: 2)
        let topic = TopicNames().requests
        let kcat = try ChildProcess(
            executable: "kcat",
            arguments: ["-b", broker.bootstrapServers, "-P", "-t", topic, "-K", ":",
                        "-H", "traceparent=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                        "-H", "x-replay-of=req-7"],
            standardInput: Array("card-1:{\"request_id\":\"r1\"}\ncard-2:{\"request_id\":\"r2\"}\n".utf8))
        #expect(try await kcat.waitForExit() == .exited(0), "\(kcat.standardErrorLines)")

        let messages = try await KafkaTestReader(bootstrapServers: broker.bootstrapServers).read(topic: topic, count: 2)
        let byKey = Dictionary(uniqueKeysWithValues: messages.map { (String(decoding: $0.key ?? [], as: UTF8.self), $0) })
        #expect(Set(byKey.keys) == ["card-1", "card-2"])
        #expect(byKey["card-1"]?.value == Array("{\"request_id\":\"r1\"}".utf8))
        #expect(byKey["card-2"]?.value == Array("{\"request_id\":\"r2\"}".utf8))
        for message in messages {
            #expect(message.headers.map(\.key) == ["traceparent", "x-replay-of"])
            #expect(message.header("traceparent") == Array("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".utf8))
            #expect(message.header("x-replay-of") == Array("req-7".utf8))
            #expect(message.timestampMs != nil)
        }
        #expect(try await broker.stop() == .exited(0))
    }

    @Test("our producer writes keys and headers; kcat -C -J reads them back")
    func bindingToKcat() async throws {
        let broker = try await EmbeddedBrokerProcess.start(brokers: 1, partitions: 1)
        let topic = TopicNames().results
        let producer = try KafkaProducer(configuration: KafkaTestConfiguration.producer(bootstrapServers: broker.bootstrapServers))
        defer { producer.close(timeoutMs: 1_000) }
        _ = try await producer.send(KafkaOutgoingMessage(
            topic: topic, key: Array("req-1".utf8), value: Array("{\"status\":\"provisioned\"}".utf8),
            headers: [KafkaHeader(key: "traceparent", string: "00-abc-def-01"), KafkaHeader(key: "attempt", string: "2")],
            timestampMs: 1_800_000_000_000))
        _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: Array("req-2".utf8), value: Array("second".utf8)))

        let kcat = try ChildProcess(
            executable: "kcat",
            arguments: ["-b", broker.bootstrapServers, "-C", "-t", topic, "-J", "-e", "-q", "-o", "beginning"])
        #expect(try await kcat.waitForExit() == .exited(0), "\(kcat.standardErrorLines)")
        let records = try kcat.standardOutputLines.filter { !$0.isEmpty }.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        try #require(records.count == 2, "\(kcat.standardOutputLines)")
        #expect(records[0]["key"] as? String == "req-1")
        #expect(records[0]["payload"] as? String == "{\"status\":\"provisioned\"}")
        #expect(records[0]["headers"] as? [String] == ["traceparent", "00-abc-def-01", "attempt", "2"])
        #expect(records[0]["ts"] as? Int == 1_800_000_000_000)
        #expect(records[1]["key"] as? String == "req-2")
        #expect(records[1]["payload"] as? String == "second")
        #expect(records[1]["offset"] as? Int == 1)
    }
}
